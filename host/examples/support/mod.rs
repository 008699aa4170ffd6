//! What the cost examples share.

use rustix::time::{ClockId, clock_gettime};

/// CPU time this process has used so far, all threads, in milliseconds: whisper's and
/// ONNX Runtime's worker threads count, as they do against the machine.
pub fn cpu_ms() -> f64 {
    let t = clock_gettime(ClockId::ProcessCPUTime);
    t.tv_sec as f64 * 1000.0 + t.tv_nsec as f64 / 1e6
}
