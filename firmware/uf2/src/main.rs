//! `yazses-uf2`: makes, checks and flashes the dongle's UF2 images (docs/firmware.md).
//! It is also `cargo run`'s runner in each board's directory, through `firmware/flash.sh`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use yazses_uf2::{Board, Segment, board, check, elf_segments, fits, image, write};

#[derive(Parser)]
#[command(about = "Make, check and flash yazses dongle UF2 images")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Writes the UF2 image of a firmware ELF.
    Convert {
        /// pico or xiao-nrf52840-sense.
        #[arg(long)]
        board: String,
        /// The firmware ELF cargo built.
        elf: PathBuf,
        /// The UF2 file to write.
        out: PathBuf,
    },
    /// Checks a UF2 file against the ELF it was made from; fails on any defect.
    Check {
        /// pico or xiao-nrf52840-sense.
        #[arg(long)]
        board: String,
        /// The firmware ELF.
        #[arg(long)]
        elf: PathBuf,
        /// The UF2 file.
        uf2: PathBuf,
    },
    /// Flashes a firmware ELF: as a UF2 onto the board's bootloader drive when one is
    /// mounted, else with probe-rs when it is installed (a debug probe attached).
    Flash {
        /// pico or xiao-nrf52840-sense.
        #[arg(long)]
        board: String,
        /// The firmware ELF.
        elf: PathBuf,
    },
}

fn main() {
    if let Err(e) = run(Cli::parse()) {
        eprintln!("yazses-uf2: {e:#}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Cmd::Convert { board: b, elf, out } => {
            let board = board(&b)?;
            let (uf2, segments) = convert(board, &elf)?;
            std::fs::write(&out, &uf2).with_context(|| format!("writing {}", out.display()))?;
            let sum = check(&uf2, board, &segments)?;
            println!(
                "{}: {} blocks, flash {:#010x}..{:#010x} ({} bytes of image)",
                out.display(),
                sum.blocks,
                sum.range.start,
                sum.range.end,
                sum.segment_bytes
            );
        }
        Cmd::Check { board: b, elf, uf2 } => {
            let board = board(&b)?;
            let sum = check(&read(&uf2)?, board, &elf_segments(&read(&elf)?)?)
                .with_context(|| format!("{} is not a good {} image", uf2.display(), b))?;
            println!(
                "{}: good for {} (family {:#010x}): {} blocks, flash {:#010x}..{:#010x}, \
                 equal to {}'s {} bytes of loadable segments",
                uf2.display(),
                board.name,
                board.family,
                sum.blocks,
                sum.range.start,
                sum.range.end,
                elf.display(),
                sum.segment_bytes
            );
        }
        Cmd::Flash { board: b, elf } => flash(board(&b)?, &elf)?,
    }
    Ok(())
}

fn read(path: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("reading {}", path.display()))
}

/// The UF2 file for `elf`, and the ELF's segments it was made from.
fn convert(board: &Board, elf: &Path) -> anyhow::Result<(Vec<u8>, Vec<Segment>)> {
    let segments =
        elf_segments(&read(elf)?).with_context(|| format!("reading {}", elf.display()))?;
    let image = image(&segments)?;
    fits(&image, board).with_context(|| {
        format!(
            "{} is not linked for {}'s bootloader",
            elf.display(),
            board.name
        )
    })?;
    Ok((write(&image, board.family)?, segments))
}

fn flash(board: &Board, elf: &Path) -> anyhow::Result<()> {
    let (uf2, _) = convert(board, elf)?;
    let file = elf.with_extension("uf2");
    std::fs::write(&file, &uf2).with_context(|| format!("writing {}", file.display()))?;
    if let Some(drive) = bootloader_drive(board) {
        let target = drive.join(format!("yazses-{}.uf2", board.name));
        eprintln!("copying {} to {}", file.display(), target.display());
        std::fs::write(&target, &uf2)
            .with_context(|| format!("copying the image to {}", target.display()))?;
        eprintln!("done: the board restarts into the new firmware");
        return Ok(());
    }
    if Command::new("probe-rs").arg("--version").output().is_ok() {
        eprintln!("no bootloader drive mounted; flashing with probe-rs");
        let status = Command::new("probe-rs")
            .args(["run", "--chip", board.probe_chip])
            .arg(elf)
            .status()?;
        if !status.success() {
            bail!("probe-rs failed ({status})");
        }
        return Ok(());
    }
    let how = match board.name {
        "pico" => "hold BOOTSEL while plugging the Pico in (a drive named RPI-RP2 appears)",
        _ => "double-tap the reset button (a drive named XIAO-SENSE appears)",
    };
    bail!(
        "no {} bootloader drive is mounted and probe-rs is not installed: {how}, then run \
         this again; or copy {} onto the drive yourself",
        board.name,
        file.display()
    )
}

/// A mounted drive whose INFO_UF2.TXT names the board's bootloader.
fn bootloader_drive(board: &Board) -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    let mut places: Vec<PathBuf> = mounts
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .map(|p| PathBuf::from(p.replace("\\040", " ")))
        .collect();
    // macOS mounts removable drives here, without /proc/mounts.
    if let Ok(volumes) = std::fs::read_dir("/Volumes") {
        places.extend(volumes.flatten().map(|e| e.path()));
    }
    places.into_iter().find(|p| {
        std::fs::read_to_string(p.join("INFO_UF2.TXT")).is_ok_and(|info| {
            info.to_lowercase()
                .contains(&board.drive_marker.to_lowercase())
        })
    })
}
