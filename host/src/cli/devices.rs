//! `yazses devices`: the audio inputs and the dongles plugged in.

use super::print;
use crate::source::{cpal, dongle};

pub(super) fn run() -> anyhow::Result<()> {
    let inputs = cpal::input_devices()?;
    let dongles: Vec<String> = dongle::find_ports()
        .into_iter()
        .map(|port| match dongle::probe(&port) {
            Ok(d) => format!(
                "  {port}  {} firmware {}, protocol {}, {} Hz",
                d.board, d.fw_version, d.protocol, d.sample_rate
            ),
            Err(e) => format!("  {port}  a yazses dongle that does not answer: {e}"),
        })
        .collect();
    print(&listing(&inputs, &dongles))
}

/// The two lists with their headers: inputs by the name `audio.device` takes, the system
/// default marked, then the dongles by port.
fn listing(inputs: &[cpal::InputDevice], dongles: &[String]) -> String {
    let mut out = String::from("Audio inputs (pin one with audio.device = \"NAME\"):\n");
    if inputs.is_empty() {
        out.push_str("  none found (no sound card, or no permission to use one)\n");
    }
    let width = inputs.iter().map(|d| d.name.len()).max().unwrap_or(0);
    for d in inputs {
        let mark = if d.default { '*' } else { ' ' };
        let line = format!("{mark} {:width$}  {}", d.name, d.description);
        out.push_str(line.trim_end());
        out.push('\n');
    }
    if inputs.iter().any(|d| d.default) {
        out.push_str("  (* the system default, used when audio.device is empty)\n");
    }
    out.push_str("\nyazses dongles (--source serial):\n");
    if dongles.is_empty() {
        out.push_str("  none plugged in\n");
    }
    for d in dongles {
        out.push_str(d);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(name: &str, description: &str, default: bool) -> cpal::InputDevice {
        cpal::InputDevice {
            name: name.into(),
            description: description.into(),
            default,
        }
    }

    #[test]
    fn inputs_are_listed_under_a_header_with_the_default_marked() {
        let text = listing(
            &[
                input("default", "Default ALSA device", true),
                input("vmic", "yazses virtual microphone", false),
            ],
            &[],
        );
        assert_eq!(
            text,
            "Audio inputs (pin one with audio.device = \"NAME\"):\n\
             * default  Default ALSA device\n\
             \x20 vmic     yazses virtual microphone\n\
             \x20 (* the system default, used when audio.device is empty)\n\
             \n\
             yazses dongles (--source serial):\n\
             \x20 none plugged in\n"
        );
    }

    #[test]
    fn no_inputs_and_a_dongle_say_so() {
        let text = listing(&[], &["  /dev/ttyACM0  pico firmware 0.1.0".into()]);
        assert!(text.contains("  none found"), "{text}");
        assert!(
            text.ends_with("/dev/ttyACM0  pico firmware 0.1.0\n"),
            "{text}"
        );
    }
}
