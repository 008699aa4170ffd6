//! UF2 images of the dongle firmware: written from the ELF cargo builds, read back and
//! checked, so a board is flashed by copying one file onto the drive its USB bootloader
//! shows, with no tool installed beside cargo.
//!
//! UF2 (Microsoft's USB flashing format) is a file of 512-byte blocks, each a 32-byte
//! header (two start magics, flags, target address, payload size, block number, block
//! count, family id), 476 bytes of which the first `payload size` are written to flash,
//! and an end magic. A bootloader takes the blocks whose family id is its chip's and
//! writes each payload at its address. We write 256-byte payloads (the RP2040 boot ROM
//! takes nothing else) covering one contiguous range: every byte of the ELF's loadable
//! segments at its load address, the gaps between them filled with 0xFF (erased flash).

use std::ops::Range;

use anyhow::{Context, bail, ensure};

/// Bytes per UF2 block.
pub const BLOCK_BYTES: usize = 512;
/// Flash bytes per block in the files we write.
pub const PAYLOAD_BYTES: usize = 256;
/// The first start magic ("UF2\n").
pub const MAGIC_START0: u32 = 0x0A32_4655;
/// The second start magic.
pub const MAGIC_START1: u32 = 0x9E5D_5157;
/// The end magic.
pub const MAGIC_END: u32 = 0x0AB1_6F30;
/// Flag: the last header word is a family id (not the file size).
pub const FLAG_FAMILY_ID: u32 = 0x0000_2000;
/// Flag: the block is not for the main flash (a bootloader skips it).
pub const FLAG_NOT_MAIN_FLASH: u32 = 0x0000_0001;
const DATA_BYTES: usize = 476;

/// What a board's bootloader needs of an image, and where it must not write.
#[derive(Debug)]
pub struct Board {
    /// The name used on the command line and in `dist/yazses-<name>.uf2`.
    pub name: &'static str,
    /// The UF2 family id the board's bootloader accepts.
    pub family: u32,
    /// Where the application image must start.
    pub app_start: u32,
    /// The flash the application may occupy.
    pub app_flash: Range<u32>,
    /// Regions an image must never touch, with what lives there.
    pub protected: &'static [(Range<u32>, &'static str)],
    /// Text in the bootloader drive's `INFO_UF2.TXT` (any case) that says it is this
    /// board's.
    pub drive_marker: &'static str,
    /// The chip's name for probe-rs.
    pub probe_chip: &'static str,
}

/// Raspberry Pi Pico: the RP2040 boot ROM's UF2 drive (RPI-RP2). The image starts with
/// the 256-byte second-stage bootloader (boot2) at the start of the external flash.
pub const PICO: Board = Board {
    name: "pico",
    family: 0xE48B_FF56,
    app_start: 0x1000_0000,
    app_flash: 0x1000_0000..0x1020_0000,
    protected: &[],
    drive_marker: "RPI-RP2",
    probe_chip: "RP2040",
};

/// Seeed XIAO nRF52840 Sense under its factory Adafruit nRF52 bootloader with SoftDevice
/// S140 7.x. The MBR and SoftDevice take the first 156 KiB (0x0-0x27000; Nordic's S140
/// v7 SoftDevice Specification, "Memory resource map"), the bootloader 0xF4000 to the
/// end, its settings and the MBR's parameters included (Adafruit_nRF52_Bootloader's
/// linker script for the nRF52840). The application lives between them.
pub const XIAO_NRF52840_SENSE: Board = Board {
    name: "xiao-nrf52840-sense",
    family: 0xADA5_2840,
    app_start: 0x0002_7000,
    app_flash: 0x0002_7000..0x000F_4000,
    protected: &[
        (0x0000_0000..0x0002_7000, "the MBR and SoftDevice S140"),
        (0x000F_4000..0x0010_0000, "the Adafruit nRF52 bootloader"),
    ],
    // Its INFO_UF2.TXT names the model and board id as Seeed XIAO nRF52840 (Sense).
    drive_marker: "xiao",
    probe_chip: "nRF52840_xxAA",
};

/// Every board, by name.
pub const BOARDS: [&Board; 2] = [&PICO, &XIAO_NRF52840_SENSE];

/// The board called `name`.
pub fn board(name: &str) -> anyhow::Result<&'static Board> {
    BOARDS
        .into_iter()
        .find(|b| b.name == name)
        .with_context(|| {
            let names: Vec<_> = BOARDS.iter().map(|b| b.name).collect();
            format!(
                "no board called {name:?}; the boards are {}",
                names.join(", ")
            )
        })
}

/// One loadable segment of an ELF: its load address (where the bytes are stored, which
/// for initialised RAM data is in flash) and its file bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// The load (physical) address.
    pub addr: u32,
    /// The bytes stored there.
    pub data: Vec<u8>,
}

/// The loadable segments of a 32-bit little-endian ELF that have bytes in the file,
/// sorted by address.
pub fn elf_segments(elf: &[u8]) -> anyhow::Result<Vec<Segment>> {
    use object::elf::{FileHeader32, PT_LOAD};
    use object::read::elf::{FileHeader, ProgramHeader};
    let header = FileHeader32::<object::LittleEndian>::parse(elf)
        .context("not a 32-bit little-endian ELF")?;
    let endian = header.endian().context("not a 32-bit little-endian ELF")?;
    let mut segments = Vec::new();
    for ph in header
        .program_headers(endian, elf)
        .context("the ELF's program headers are unreadable")?
    {
        if ph.p_type(endian) != PT_LOAD || ph.p_filesz(endian) == 0 {
            continue;
        }
        let data = ph
            .data(endian, elf)
            .ok()
            .context("a segment's bytes lie outside the file")?;
        segments.push(Segment {
            addr: ph.p_paddr(endian),
            data: data.to_vec(),
        });
    }
    segments.sort_by_key(|s| s.addr);
    ensure!(!segments.is_empty(), "the ELF has no loadable bytes");
    Ok(segments)
}

/// The flash contents: one contiguous range from `base`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// The address of the first byte.
    pub base: u32,
    /// Every byte from `base` on, gaps as 0xFF.
    pub bytes: Vec<u8>,
}

impl Image {
    /// The addresses it covers.
    pub fn range(&self) -> Range<u32> {
        self.base..self.base + self.bytes.len() as u32
    }
}

/// Lays `segments` out as one range, refusing overlaps.
pub fn image(segments: &[Segment]) -> anyhow::Result<Image> {
    let mut sorted: Vec<&Segment> = segments.iter().collect();
    sorted.sort_by_key(|s| s.addr);
    let first = sorted.first().context("no segment to write")?;
    let base = first.addr;
    let mut bytes: Vec<u8> = Vec::new();
    for s in sorted {
        let offset = (s.addr - base) as usize;
        ensure!(
            offset >= bytes.len(),
            "segments overlap at {:#010x}",
            s.addr
        );
        bytes.resize(offset, 0xFF);
        bytes.extend_from_slice(&s.data);
    }
    ensure!(
        u64::from(base) + bytes.len() as u64 <= u64::from(u32::MAX),
        "the image runs past the 32-bit address space"
    );
    Ok(Image { base, bytes })
}

/// Checks that `image` fits `board`: it starts where the bootloader jumps, stays in the
/// application's flash and touches no protected region.
pub fn fits(image: &Image, board: &Board) -> anyhow::Result<()> {
    let range = image.range();
    ensure!(
        image.base == board.app_start,
        "the image starts at {:#010x}; {} images start at {:#010x}",
        image.base,
        board.name,
        board.app_start
    );
    for (region, what) in board.protected {
        ensure!(
            range.end <= region.start || range.start >= region.end,
            "the image ({:#010x}..{:#010x}) overlaps {what} ({:#010x}..{:#010x})",
            range.start,
            range.end,
            region.start,
            region.end
        );
    }
    ensure!(
        range.start >= board.app_flash.start && range.end <= board.app_flash.end,
        "the image ({:#010x}..{:#010x}) is outside {}'s application flash ({:#010x}..{:#010x})",
        range.start,
        range.end,
        board.name,
        board.app_flash.start,
        board.app_flash.end
    );
    Ok(())
}

/// The UF2 file for `image`: 256-byte payloads, the last padded with 0xFF, every block
/// carrying `family`.
pub fn write(image: &Image, family: u32) -> anyhow::Result<Vec<u8>> {
    ensure!(
        (image.base as usize).is_multiple_of(PAYLOAD_BYTES),
        "the image starts at {:#010x}, not on a {PAYLOAD_BYTES}-byte page",
        image.base
    );
    let count = image.bytes.len().div_ceil(PAYLOAD_BYTES);
    let mut out = Vec::with_capacity(count * BLOCK_BYTES);
    for (no, chunk) in image.bytes.chunks(PAYLOAD_BYTES).enumerate() {
        let words = [
            MAGIC_START0,
            MAGIC_START1,
            FLAG_FAMILY_ID,
            image.base + (no * PAYLOAD_BYTES) as u32,
            PAYLOAD_BYTES as u32,
            no as u32,
            count as u32,
            family,
        ];
        for w in words {
            out.extend_from_slice(&w.to_le_bytes());
        }
        let mut data = [0u8; DATA_BYTES];
        data[..PAYLOAD_BYTES].fill(0xFF);
        data[..chunk.len()].copy_from_slice(chunk);
        out.extend_from_slice(&data);
        out.extend_from_slice(&MAGIC_END.to_le_bytes());
    }
    Ok(out)
}

/// One block of a UF2 file, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The flags word.
    pub flags: u32,
    /// Where the payload goes.
    pub addr: u32,
    /// The payload.
    pub payload: Vec<u8>,
    /// The block's number.
    pub no: u32,
    /// How many blocks the file says it has.
    pub count: u32,
    /// The family id (or file size, without [`FLAG_FAMILY_ID`]).
    pub family: u32,
}

/// Reads a UF2 file: every block's magics, and block numbers that count 0, 1, ... up to
/// a count every block agrees on.
pub fn parse(uf2: &[u8]) -> anyhow::Result<Vec<Block>> {
    ensure!(
        !uf2.is_empty() && uf2.len().is_multiple_of(BLOCK_BYTES),
        "a UF2 file is whole 512-byte blocks; this one is {} bytes",
        uf2.len()
    );
    let mut blocks = Vec::new();
    for (i, raw) in uf2.chunks_exact(BLOCK_BYTES).enumerate() {
        let word = |at: usize| u32::from_le_bytes(raw[at..at + 4].try_into().unwrap());
        ensure!(
            word(0) == MAGIC_START0 && word(4) == MAGIC_START1 && word(508) == MAGIC_END,
            "block {i} has wrong magic numbers"
        );
        let size = word(16) as usize;
        ensure!(size <= DATA_BYTES, "block {i} claims a {size}-byte payload");
        let block = Block {
            flags: word(8),
            addr: word(12),
            payload: raw[32..32 + size].to_vec(),
            no: word(20),
            count: word(24),
            family: word(28),
        };
        ensure!(block.no as usize == i, "block {i} is numbered {}", block.no);
        blocks.push(block);
    }
    let count = blocks.len() as u32;
    if let Some(b) = blocks.iter().find(|b| b.count != count) {
        bail!(
            "block {} says the file has {} blocks; it has {count}",
            b.no,
            b.count
        );
    }
    Ok(blocks)
}

/// What [`check`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Blocks in the file.
    pub blocks: usize,
    /// The flash range written.
    pub range: Range<u32>,
    /// Bytes of the ELF's segments in it.
    pub segment_bytes: usize,
}

/// Checks a UF2 file for `board` against the ELF's `segments`: well-formed blocks, all for
/// the board's family and main flash, one range without gaps that fits the board, and the
/// segments' bytes at their load addresses with only 0xFF between and after them.
pub fn check(uf2: &[u8], board: &Board, segments: &[Segment]) -> anyhow::Result<Summary> {
    let blocks = parse(uf2)?;
    let mut flash = Image {
        base: blocks[0].addr,
        bytes: Vec::new(),
    };
    for b in &blocks {
        ensure!(
            b.flags & FLAG_FAMILY_ID != 0 && b.family == board.family,
            "block {} is not for {} (family {:#010x}, flags {:#x}; want family {:#010x})",
            b.no,
            board.name,
            b.family,
            b.flags,
            board.family
        );
        ensure!(
            b.flags & FLAG_NOT_MAIN_FLASH == 0,
            "block {} is marked not for main flash",
            b.no
        );
        let expected = flash.range().end;
        ensure!(
            b.addr == expected,
            "block {} writes {:#010x}; the range so far ends at {expected:#010x} (a gap or an overlap)",
            b.no,
            b.addr
        );
        flash.bytes.extend_from_slice(&b.payload);
    }
    fits(&flash, board)?;
    let mut expected = image(segments)?;
    ensure!(
        expected.base == flash.base,
        "the ELF's image starts at {:#010x}, the UF2 at {:#010x}",
        expected.base,
        flash.base
    );
    ensure!(
        flash.bytes.len() >= expected.bytes.len()
            && flash.bytes.len() - expected.bytes.len() < PAYLOAD_BYTES,
        "the UF2 holds {} bytes for the ELF's {}",
        flash.bytes.len(),
        expected.bytes.len()
    );
    expected.bytes.resize(flash.bytes.len(), 0xFF);
    if let Some(at) = expected
        .bytes
        .iter()
        .zip(&flash.bytes)
        .position(|(a, b)| a != b)
    {
        bail!(
            "the UF2 differs from the ELF at {:#010x}",
            flash.base + at as u32
        );
    }
    Ok(Summary {
        blocks: blocks.len(),
        range: flash.range(),
        segment_bytes: segments.iter().map(|s| s.data.len()).sum(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs() -> Vec<Segment> {
        vec![
            Segment {
                addr: 0x2_7000,
                data: (0..250u32).map(|i| i as u8).collect(),
            },
            Segment {
                addr: 0x2_7100,
                data: vec![0xAB; 200],
            },
        ]
    }

    #[test]
    fn an_image_fills_the_gaps_with_erased_flash_and_refuses_overlaps() {
        let mut s = segs();
        let img = image(&s).unwrap();
        assert_eq!(img.range(), 0x2_7000..0x2_7100 + 200);
        assert_eq!(&img.bytes[250..256], &[0xFF; 6]);
        assert_eq!(img.bytes[256], 0xAB);
        s[1].addr = 0x2_70F0; // 250 bytes from 0x27000 end at 0x270FA
        assert!(image(&s).unwrap_err().to_string().contains("overlap"));
    }

    #[test]
    fn a_written_file_reads_back_and_checks_against_its_segments() {
        let s = segs();
        let uf2 = write(&image(&s).unwrap(), XIAO_NRF52840_SENSE.family).unwrap();
        assert_eq!(uf2.len(), 2 * BLOCK_BYTES);
        let sum = check(&uf2, &XIAO_NRF52840_SENSE, &s).unwrap();
        assert_eq!(sum.blocks, 2);
        assert_eq!(sum.range, 0x2_7000..0x2_7200);
        assert_eq!(sum.segment_bytes, 450);
    }

    /// Each way a file can be wrong, made from a good one, is caught.
    #[test]
    fn every_kind_of_damage_is_refused() {
        let s = segs();
        let good = write(&image(&s).unwrap(), XIAO_NRF52840_SENSE.family).unwrap();
        let damaged = |at: usize, value: u32| {
            let mut f = good.clone();
            f[at..at + 4].copy_from_slice(&value.to_le_bytes());
            f
        };
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (good[..700].to_vec(), "whole 512-byte blocks"),
            (damaged(0, 0), "magic"),
            (damaged(BLOCK_BYTES + 508, 1), "magic"),
            (damaged(BLOCK_BYTES + 20, 5), "numbered 5"),
            (damaged(24, 3), "has 2"),
            (damaged(28, PICO.family), "not for xiao"),
            (damaged(8, 0), "not for xiao"),
            (
                damaged(8, FLAG_FAMILY_ID | FLAG_NOT_MAIN_FLASH),
                "not for main",
            ),
            (damaged(BLOCK_BYTES + 12, 0x2_7200), "a gap"),
            (damaged(BLOCK_BYTES + 12, 0x2_7000), "overlap"),
            (
                damaged(32, 0x1234_5678),
                "differs from the ELF at 0x00027000",
            ),
            (
                damaged(BLOCK_BYTES + 32 + 250, 0),
                "differs from the ELF at 0x000271fa",
            ),
        ];
        for (file, why) in cases {
            let err = check(&file, &XIAO_NRF52840_SENSE, &s)
                .unwrap_err()
                .to_string();
            assert!(err.contains(why), "{why:?} not in {err:?}");
        }
    }

    #[test]
    fn an_image_over_the_softdevice_or_the_bootloader_or_elsewhere_does_not_fit() {
        let at = |base: u32, len: usize| Image {
            base,
            bytes: vec![0; len],
        };
        fits(&at(0x2_7000, 0x1000), &XIAO_NRF52840_SENSE).unwrap();
        let err = |i: Image| fits(&i, &XIAO_NRF52840_SENSE).unwrap_err().to_string();
        assert!(err(at(0x0, 0x1000)).contains("starts at"));
        assert!(err(at(0x2_7000, 0xD_0000)).contains("bootloader"));
        let mut low = XIAO_NRF52840_SENSE.protected[0].clone();
        low.0 = 0..0x2_8000; // a SoftDevice larger than the image's start
        let board = Board {
            protected: Box::leak(Box::new([low])),
            ..XIAO_NRF52840_SENSE
        };
        assert!(
            fits(&at(0x2_7000, 0x100), &board)
                .unwrap_err()
                .to_string()
                .contains("SoftDevice")
        );
        fits(&at(0x1000_0000, 0x1000), &PICO).unwrap();
        assert!(
            fits(&at(0x1000_0000, 0x30_0000), &PICO)
                .unwrap_err()
                .to_string()
                .contains("outside")
        );
    }

    #[test]
    fn boards_are_found_by_name() {
        assert_eq!(board("pico").unwrap().family, 0xE48B_FF56);
        assert!(board("uno").unwrap_err().to_string().contains("pico"));
    }
}
