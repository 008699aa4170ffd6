// Preloaded into the stdio-to-HTTP bridge (supergateway has no host option): every
// server it starts listens on 127.0.0.1 only, so a process that can reach a microphone
// is never offered on the network, not even for the conformance run.
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number") {
    const port = args[0];
    const rest = args.slice(1).filter((a) => typeof a === "function");
    return listen.call(this, port, "127.0.0.1", ...rest);
  }
  if (args[0] && typeof args[0] === "object" && "port" in args[0]) {
    return listen.call(this, { ...args[0], host: "127.0.0.1" }, ...args.slice(1));
  }
  return listen.apply(this, args);
};
