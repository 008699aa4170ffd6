//! `yazses devices`: the audio inputs and the dongles plugged in.

use super::print;
use crate::source::{cpal, dongle};

pub(super) fn run() -> anyhow::Result<()> {
    let mut out = String::new();
    for d in cpal::input_devices()? {
        out.push_str(&format!(
            "{}{}\t{}\n",
            d.name,
            if d.default { " (default)" } else { "" },
            d.description
        ));
    }
    if out.is_empty() {
        out.push_str("no audio input devices found\n");
    }
    for port in dongle::find_ports() {
        match dongle::probe(&port) {
            Ok(d) => out.push_str(&format!(
                "{port}\tyazses dongle: {} firmware {}, protocol {}, {} Hz\n",
                d.board, d.fw_version, d.protocol, d.sample_rate
            )),
            Err(e) => out.push_str(&format!("{port}\tyazses dongle, not answering: {e}\n")),
        }
    }
    print(&out)
}
