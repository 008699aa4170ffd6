//! `yazses vad --plot`: a picture of why the detector decided what it did.
//!
//! Top: the waveform, with the speech frames shaded. Bottom: frame level, smoothed level,
//! noise floor and both thresholds in dBFS, the speech frames, where counted speech
//! began and where the policy stopped.

use std::path::{Path, PathBuf};

use plotters::prelude::*;
use plotters::style::FontStyle;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::analysis::Analysis;

/// Why a plot could not be drawn.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// No TrueType font was found to label the axes.
    #[error(
        "--plot needs a TrueType font and none was found (looked for {looked}); install fonts-dejavu-core"
    )]
    NoFont {
        /// The paths tried.
        looked: String,
    },
    /// The file named is not a PNG file, or cannot be written.
    #[error("--plot cannot write {path}: {reason}")]
    Target {
        /// The output file.
        path: PathBuf,
        /// Why, in words.
        reason: String,
    },
    /// The drawing or the PNG encoding failed.
    #[error("cannot draw {path}: {reason}")]
    Draw {
        /// The output file.
        path: PathBuf,
        /// What failed.
        reason: String,
    },
}

/// Picks one of the levels a frame reports.
type LevelOf = fn(&yazses_core::vad::VadFrame) -> yazses_core::level::Level;

const FONT_PATHS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
    "C:\\Windows\\Fonts\\arial.ttf",
];

fn register_font() -> Result<(), PlotError> {
    for path in FONT_PATHS {
        if let Ok(bytes) = std::fs::read(path) {
            let leaked: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            if plotters::style::register_font("sans-serif", FontStyle::Normal, leaked).is_ok() {
                return Ok(());
            }
        }
    }
    Err(PlotError::NoFont {
        looked: FONT_PATHS.join(", "),
    })
}

/// Checks, before any work, that a plot can be written to `path`: a `.png` name, a folder
/// that is there and writable, a font for the labels. The file is made (empty) here.
pub fn check_target(path: &Path) -> Result<(), PlotError> {
    let target = |reason: String| PlotError::Target {
        path: path.to_owned(),
        reason,
    };
    let png = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("png"));
    if !png {
        return Err(target(
            "the picture is a PNG file; give a name ending in .png".into(),
        ));
    }
    if let Err(e) = std::fs::File::create(path) {
        let folder = path.parent().filter(|p| !p.as_os_str().is_empty());
        return Err(target(match (e.kind(), folder) {
            (std::io::ErrorKind::NotFound, Some(folder)) => {
                format!("the folder {} does not exist", folder.display())
            }
            (std::io::ErrorKind::PermissionDenied, _) => "it may not be written here".into(),
            (std::io::ErrorKind::IsADirectory, _) => "it is a folder".into(),
            _ => format!("{}", std::io::Error::from(e.kind())),
        }));
    }
    register_font()
}

/// Draws `analysis` of `samples` to a PNG at `path`.
pub fn draw(analysis: &Analysis, samples: &[i16], path: &Path) -> Result<(), PlotError> {
    register_font()?;
    // plotters' errors are Rust's debug words; what a person can act on is the file.
    let fail = |e: &dyn std::fmt::Display| {
        tracing::debug!(error = %e, "drawing the plot failed");
        PlotError::Draw {
            path: path.to_owned(),
            reason: "the picture could not be drawn or written".into(),
        }
    };
    let root = BitMapBackend::new(path, (1600, 900)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let (top, bottom) = root.split_vertically(330);
    let secs = (samples.len() as f64 / 16_000.0).max(0.01);

    let mut wave = ChartBuilder::on(&top)
        .caption("waveform (speech frames shaded)", ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..secs, -1.0..1.0)
        .map_err(|e| fail(&e))?;
    wave.configure_mesh()
        .disable_mesh()
        .x_desc("seconds")
        .draw()
        .map_err(|e| fail(&e))?;
    let shade = RGBColor(255, 215, 160).filled();
    wave.draw_series(analysis.frames.iter().filter(|f| f.vad.speech).map(|f| {
        let end = f.end.total_micros() as f64 / 1e6;
        Rectangle::new([(end - 0.01, -1.0), (end, 1.0)], shade)
    }))
    .map_err(|e| fail(&e))?;
    // One min/max bar per pixel column keeps the picture honest for long files.
    let columns = 1500usize;
    let per = samples.len().div_ceil(columns).max(1);
    wave.draw_series(samples.chunks(per).enumerate().map(|(i, c)| {
        let x = (i * per) as f64 / 16_000.0;
        let lo = *c.iter().min().unwrap_or(&0) as f64 / 32768.0;
        let hi = *c.iter().max().unwrap_or(&0) as f64 / 32768.0;
        PathElement::new(vec![(x, lo), (x, hi)], BLUE.stroke_width(1))
    }))
    .map_err(|e| fail(&e))?;

    let db = |l: yazses_core::level::Level| f64::from(l.to_dbfs());
    let lows = analysis
        .frames
        .iter()
        .map(|f| db(f.vad.floor).min(db(f.vad.level)));
    // The lines stay above `floor_y`; the speech frames get a band of their own below it.
    let floor_y = lows.fold(0.0f64, f64::min).max(-110.0) - 5.0;
    let db = |l: yazses_core::level::Level| db(l).max(floor_y);
    let ymin = floor_y - 8.0;
    let mut levels = ChartBuilder::on(&bottom)
        .caption(
            "frame level, noise floor and thresholds (dBFS)",
            ("sans-serif", 20),
        )
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..secs, ymin..5.0)
        .map_err(|e| fail(&e))?;
    levels
        .configure_mesh()
        .x_desc("seconds")
        .y_desc("dBFS")
        .draw()
        .map_err(|e| fail(&e))?;
    let t = |f: &yazses_core::autostop::FrameReport| f.end.total_micros() as f64 / 1e6;
    let series: [(&str, RGBColor, LevelOf); 5] = [
        ("frame level", RGBColor(170, 170, 170), |v| v.level),
        ("smoothed level", BLACK, |v| v.smoothed),
        ("noise floor", RGBColor(0, 140, 0), |v| v.floor),
        ("on threshold", RED, |v| v.on_threshold),
        ("off threshold", RGBColor(230, 140, 0), |v| v.off_threshold),
    ];
    for (name, color, get) in series {
        levels
            .draw_series(LineSeries::new(
                analysis.frames.iter().map(|f| (t(f), db(get(&f.vad)))),
                color.stroke_width(2),
            ))
            .map_err(|e| fail(&e))?
            .label(name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    let speech_y = floor_y - 4.0;
    levels
        .draw_series(analysis.frames.iter().filter(|f| f.vad.speech).map(|f| {
            Rectangle::new(
                [(t(f) - 0.01, speech_y - 1.5), (t(f), speech_y + 1.5)],
                RGBColor(255, 150, 60).filled(),
            )
        }))
        .map_err(|e| fail(&e))?
        .label("speech frame")
        .legend(|(x, y)| {
            Rectangle::new(
                [(x, y - 4), (x + 20, y + 4)],
                RGBColor(255, 150, 60).filled(),
            )
        });
    let a = &analysis.report.autostop;
    let mut marks = vec![(
        a.stop_at_ms as f64 / 1000.0,
        format!("stop: {}", a.stopped_because.as_str()),
        MAGENTA,
    )];
    if let Some(start) = a.speech_start_ms {
        marks.push((start as f64 / 1000.0, "speech started".to_owned(), CYAN));
    }
    for (x, label, color) in marks {
        levels
            .draw_series([PathElement::new(
                vec![(x, ymin), (x, 5.0)],
                color.stroke_width(3),
            )])
            .map_err(|e| fail(&e))?;
        // A mark in the right half is labelled to its left, so the label stays inside.
        let anchor = if x > secs / 2.0 {
            Pos::new(HPos::Right, VPos::Top)
        } else {
            Pos::new(HPos::Left, VPos::Top)
        };
        let style = ("sans-serif", 18).into_font().color(&color).pos(anchor);
        levels
            .draw_series([Text::new(label, (x, 0.0), style)])
            .map_err(|e| fail(&e))?;
    }
    levels
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(|e| fail(&e))?;
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}
