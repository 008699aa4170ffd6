//! yazses-core on an emulated Cortex-M: the proof that the chip decides what the host does.
//!
//! [`run`] feeds the clip `fixtures/qemu/speech.raw` (embedded in flash) through the same
//! [`Autostop`] the host uses, twice:
//!
//! 1. timed: SysTick around each `push_frame`, under QEMU's `-icount shift=0`, where the
//!    virtual clock advances by the same amount for every instruction. A calibration loop
//!    of a known instruction count (`cortex_m::asm::delay`) turns ticks into instructions,
//!    whatever clock the machine gives SysTick;
//! 2. traced: each frame's trace line (`Display for FrameReport`) is compared with the
//!    host's golden trace `fixtures/qemu/decisions.txt`, which `tests/cortex_m_trace.rs`
//!    in the host workspace pins.
//!
//! It reports through semihosting and exits QEMU with status 0 only when every line is
//! equal.
#![no_std]

use core::fmt::{self, Write};

use cortex_m::peripheral::SYST;
use cortex_m::peripheral::syst::SystClkSource;
use cortex_m_semihosting::{debug, hprintln};
use yazses_core::autostop::Autostop;
use yazses_core::endpoint::EndpointConfig;
use yazses_core::frame::{FRAME_SAMPLES, Frame};
use yazses_core::time::Instant;
use yazses_core::vad::Vad;

/// 16 kHz mono i16 little-endian, whole frames.
static PCM: &[u8] = include_bytes!("../../../fixtures/qemu/speech.raw");
/// One line per frame, as the host computes it.
static GOLDEN: &str = include_str!("../../../fixtures/qemu/decisions.txt");

/// Instructions `cortex_m::asm::delay(CALIBRATION_CYCLES)` executes: in cortex-m 0.7.10
/// (pinned by Cargo.lock) its loop is `subs; bne` (2 instructions) run `n + 1` times. This
/// was cross-checked against QEMU's own count (`-singlestep -d exec,nochain`): both give
/// the same instructions per frame within 0.2 % (docs/benchmarks.md).
const CALIBRATION_CYCLES: u32 = 1_000_000;
const CALIBRATION_INSTRUCTIONS: u64 = 2 * (CALIBRATION_CYCLES as u64 + 1);

/// Runs both passes, prints the result and exits QEMU.
pub fn run() -> ! {
    let mut core = cortex_m::Peripherals::take().unwrap();
    let part = core.CPUID.base.read() >> 4 & 0xFFF;
    let name = match part {
        0xC24 => "Cortex-M4",
        0xC20 => "Cortex-M0",
        _ => "Cortex-M (unknown part)",
    };
    core.SYST.set_clock_source(SystClkSource::Core);
    core.SYST.set_reload(0x00FF_FFFF);
    core.SYST.clear_current();
    core.SYST.enable_counter();

    let frames = PCM.len() / (2 * FRAME_SAMPLES);
    let ticks = time_all_frames();
    let t0 = SYST::get_current();
    cortex_m::asm::delay(CALIBRATION_CYCLES);
    let calibration = ticks_between(t0, SYST::get_current());

    let (checked, mismatch) = compare_with_golden();
    match mismatch {
        None if checked == frames && GOLDEN.lines().count() == frames => {
            hprintln!(
                "{}: {} frames, every trace line equal to the host's",
                name,
                frames
            );
        }
        None => {
            hprintln!(
                "{}: the golden trace has {} lines for {} frames",
                name,
                GOLDEN.lines().count(),
                frames
            );
            debug::exit(debug::EXIT_FAILURE);
        }
        Some(_) => debug::exit(debug::EXIT_FAILURE),
    }
    if calibration == 0 {
        hprintln!(
            "{}: SysTick does not run on this machine; cost not measured",
            name
        );
    } else {
        // Rounded to the nearest instruction.
        let per_frame = (ticks * CALIBRATION_INSTRUCTIONS + calibration * frames as u64 / 2)
            / (calibration * frames as u64);
        hprintln!(
            "{}: {} instructions per 10 ms frame (mean of {}; {} ticks, {} ticks per {} instructions)",
            name,
            per_frame,
            frames,
            ticks,
            calibration,
            CALIBRATION_INSTRUCTIONS
        );
    }
    debug::exit(debug::EXIT_SUCCESS);
    #[allow(clippy::empty_loop)]
    loop {}
}

/// SysTick counts down through 24 bits.
fn ticks_between(start: u32, end: u32) -> u64 {
    u64::from(start.wrapping_sub(end) & 0x00FF_FFFF)
}

fn frame_at(index: usize) -> Frame {
    let bytes = &PCM[index * 2 * FRAME_SAMPLES..(index + 1) * 2 * FRAME_SAMPLES];
    let mut frame = [0i16; FRAME_SAMPLES];
    for (sample, pair) in frame.iter_mut().zip(bytes.chunks_exact(2)) {
        *sample = i16::from_le_bytes([pair[0], pair[1]]);
    }
    frame
}

fn new_capture() -> Autostop {
    Autostop::new(Vad::DEFAULT, EndpointConfig::default(), Instant::ZERO)
}

/// SysTick ticks spent inside `push_frame`, over the whole clip.
fn time_all_frames() -> u64 {
    let mut capture = new_capture();
    let mut ticks = 0;
    for i in 0..PCM.len() / (2 * FRAME_SAMPLES) {
        let frame = frame_at(i);
        let t0 = SYST::get_current();
        let report = capture.push_frame(&frame);
        let t1 = SYST::get_current();
        core::hint::black_box(report);
        ticks += ticks_between(t0, t1);
    }
    ticks
}

/// Compares each frame's trace line with the golden one; returns how many were equal and
/// the first frame that was not (after printing both lines).
fn compare_with_golden() -> (usize, Option<usize>) {
    let mut capture = new_capture();
    let mut golden = GOLDEN.lines();
    for i in 0..PCM.len() / (2 * FRAME_SAMPLES) {
        let report = capture.push_frame(&frame_at(i));
        let mut line = Line::new();
        if write!(line, "{report}").is_err() {
            hprintln!(
                "frame {}: trace line longer than {} bytes",
                i,
                line.buf.len()
            );
            return (i, Some(i));
        }
        let expected = golden.next().unwrap_or("<missing>");
        if line.as_str() != expected {
            hprintln!(
                "frame {} differs\n  host: {}\n  chip: {}",
                i,
                expected,
                line.as_str()
            );
            return (i, Some(i));
        }
    }
    (PCM.len() / (2 * FRAME_SAMPLES), None)
}

/// A trace line, formatted without allocation.
struct Line {
    buf: [u8; 128],
    len: usize,
}

impl Line {
    fn new() -> Line {
        Line {
            buf: [0; 128],
            len: 0,
        }
    }

    fn as_str(&self) -> &str {
        core::str::from_utf8(&self.buf[..self.len]).unwrap_or("<not utf-8>")
    }
}

impl Write for Line {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        if end > self.buf.len() {
            return Err(fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}
