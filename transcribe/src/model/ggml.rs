//! Writing the ggml whisper file whisper.cpp loads.
//!
//! Layout, all little-endian: the magic `0x67676d6c` ("ggml"), eleven `i32` hyper-parameters
//! ([`Hparams`]), the mel filterbank (`n_mel`, `n_fft` as `i32`, then `n_mel * n_fft` `f32`),
//! the vocabulary (an `i32` count, then each token as a `u32` length and its raw bytes), then
//! the tensors until the end of the file: `i32` rank, `i32` name length, `i32` type (0 f32,
//! 1 f16, 8 q8_0), the dimensions innermost first, the name, the data.

use std::fs;
use std::io::{self, BufReader, Read, Write};
use std::path::Path;

/// The ggml file magic.
pub const MAGIC: u32 = 0x6767_6d6c;

/// The model's shape, in the order the file stores it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hparams {
    /// Vocabulary size, special tokens included.
    pub n_vocab: i32,
    /// Encoder positions (1500 for 30 s).
    pub n_audio_ctx: i32,
    /// Encoder width.
    pub n_audio_state: i32,
    /// Encoder attention heads.
    pub n_audio_head: i32,
    /// Encoder layers.
    pub n_audio_layer: i32,
    /// Decoder positions (448).
    pub n_text_ctx: i32,
    /// Decoder width.
    pub n_text_state: i32,
    /// Decoder attention heads.
    pub n_text_head: i32,
    /// Decoder layers.
    pub n_text_layer: i32,
    /// Mel bins (80, or 128 for large-v3).
    pub n_mels: i32,
    /// Weight type: 1 is f16, [`FTYPE_Q8_0`] q8_0 (with ggml's quantisation version).
    pub ftype: i32,
}

impl Hparams {
    /// Whether the vocabulary holds the language tokens (51,865 or more tokens; the
    /// English-only models have 51,864).
    pub fn multilingual(&self) -> bool {
        self.n_vocab >= 51865
    }
}

/// A tensor's element type in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TensorType {
    /// 32-bit float (biases, norms, positional embeddings).
    F32,
    /// Half float (weight matrices, convolutions).
    F16,
    /// ggml's q8_0: blocks of 32 values along a row, each stored as an f16 scale and 32
    /// signed bytes (weight matrices of a q8_0 model; rows must hold whole blocks).
    Q8_0,
}

/// The header's `ftype` of a model whose weight matrices are q8_0: ggml's
/// `GGML_FTYPE_MOSTLY_Q8_0` (7) plus its quantisation version (2) times 1000, as
/// whisper.cpp's own quantizer writes it.
pub const FTYPE_Q8_0: i32 = 2007;

/// Values per q8_0 block.
pub const Q8_0_BLOCK: usize = 32;

/// What a header's `ftype` says the weight matrices are (ggml's names; the quantisation
/// version, the thousands, left out).
pub fn weight_type_name(ftype: i32) -> &'static str {
    match ftype % 1000 {
        0 => "f32",
        1 => "f16",
        2 => "q4_0",
        3 => "q4_1",
        7 => "q8_0",
        8 => "q5_0",
        9 => "q5_1",
        10 => "q2_K",
        11 => "q3_K",
        12 => "q4_K",
        13 => "q5_K",
        14 => "q6_K",
        24 => "bf16",
        _ => "an unknown weight type",
    }
}

/// Writes the header: magic, hyper-parameters, mel filters and vocabulary.
pub fn write_header<W: Write>(
    out: &mut W,
    hp: &Hparams,
    mel_filters: &[f32],
    n_fft: usize,
    vocab: &[Vec<u8>],
) -> io::Result<()> {
    out.write_all(&MAGIC.to_le_bytes())?;
    for v in [
        hp.n_vocab,
        hp.n_audio_ctx,
        hp.n_audio_state,
        hp.n_audio_head,
        hp.n_audio_layer,
        hp.n_text_ctx,
        hp.n_text_state,
        hp.n_text_head,
        hp.n_text_layer,
        hp.n_mels,
        hp.ftype,
    ] {
        out.write_all(&v.to_le_bytes())?;
    }
    out.write_all(&hp.n_mels.to_le_bytes())?;
    out.write_all(&(n_fft as i32).to_le_bytes())?;
    for &f in mel_filters {
        out.write_all(&f.to_le_bytes())?;
    }
    out.write_all(&(vocab.len() as i32).to_le_bytes())?;
    for token in vocab {
        out.write_all(&(token.len() as u32).to_le_bytes())?;
        out.write_all(token)?;
    }
    Ok(())
}

/// Writes one tensor. `shape` is outermost first, as in PyTorch; the file wants it reversed.
pub fn write_tensor<W: Write>(
    out: &mut W,
    name: &str,
    shape: &[usize],
    ty: TensorType,
    values: &[f32],
) -> io::Result<()> {
    debug_assert_eq!(shape.iter().product::<usize>(), values.len());
    if ty == TensorType::Q8_0 && shape.last().is_none_or(|&n| n % Q8_0_BLOCK != 0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{name}: rows of {shape:?} do not hold whole q8_0 blocks of {Q8_0_BLOCK}"),
        ));
    }
    out.write_all(&(shape.len() as i32).to_le_bytes())?;
    out.write_all(&(name.len() as i32).to_le_bytes())?;
    out.write_all(
        &match ty {
            TensorType::F32 => 0i32,
            TensorType::F16 => 1,
            TensorType::Q8_0 => 8,
        }
        .to_le_bytes(),
    )?;
    for &d in shape.iter().rev() {
        out.write_all(&(d as i32).to_le_bytes())?;
    }
    out.write_all(name.as_bytes())?;
    let mut buf = Vec::with_capacity(values.len() * 4);
    match ty {
        TensorType::F32 => values
            .iter()
            .for_each(|v| buf.extend_from_slice(&v.to_le_bytes())),
        TensorType::F16 => values
            .iter()
            .for_each(|&v| buf.extend_from_slice(&half::f16::from_f32(v).to_le_bytes())),
        TensorType::Q8_0 => values
            .chunks_exact(Q8_0_BLOCK)
            .for_each(|block| buf.extend_from_slice(&q8_0_block(block))),
    }
    out.write_all(&buf)
}

/// One q8_0 block as ggml's reference quantizer makes it: the scale is the largest
/// magnitude over 127, each value its nearest multiple of the scale (halves away from 0).
fn q8_0_block(values: &[f32]) -> [u8; 2 + Q8_0_BLOCK] {
    let amax = values.iter().fold(0f32, |m, v| m.max(v.abs()));
    let scale = amax / 127.0;
    let inverse = if scale == 0.0 { 0.0 } else { 1.0 / scale };
    let mut block = [0u8; 2 + Q8_0_BLOCK];
    block[..2].copy_from_slice(&half::f16::from_f32(scale).to_le_bytes());
    for (q, v) in block[2..].iter_mut().zip(values) {
        *q = (v * inverse).round().clamp(-127.0, 127.0) as i8 as u8;
    }
    block
}

/// What [`check_file`] found in a well-formed file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileSummary {
    /// The header's hyper-parameters.
    pub hparams: Hparams,
    /// Tokens stored in the file.
    pub tokens: usize,
    /// Tensors stored.
    pub tensors: usize,
}

/// Why a file is not a whole ggml whisper model.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// It could not be opened or read.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// It is some other kind of file.
    #[error("it is not a ggml whisper model (wrong magic number)")]
    NotGgml,
    /// It ends inside the part named.
    #[error("the file ends inside {0}: it is truncated")]
    Truncated(String),
    /// A part holds values no whisper model has; the text says which and where.
    #[error("{0}")]
    Damaged(String),
}

/// Walks a ggml whisper file's whole structure without loading the weights: magic,
/// plausible hyper-parameters, filterbank, vocabulary, and every tensor's header with a
/// data size that matches its type and shape, ending exactly at the end of the file. A
/// truncated, damaged or foreign file is refused with where it went wrong, before
/// whisper.cpp (which may abort the process on some malformed files) ever sees it.
pub fn check_file(path: &Path) -> Result<FileSummary, FileError> {
    let file = fs::File::open(path)?;
    let len = file.metadata()?.len();
    let mut w = Walker {
        r: BufReader::new(file),
        pos: 0,
        len,
    };
    if w.i32("the magic")? as u32 != MAGIC {
        return Err(FileError::NotGgml);
    }
    let mut h = [0i32; 11];
    for v in &mut h {
        *v = w.i32("the hyper-parameters")?;
    }
    let hp = Hparams {
        n_vocab: h[0],
        n_audio_ctx: h[1],
        n_audio_state: h[2],
        n_audio_head: h[3],
        n_audio_layer: h[4],
        n_text_ctx: h[5],
        n_text_state: h[6],
        n_text_head: h[7],
        n_text_layer: h[8],
        n_mels: h[9],
        ftype: h[10],
    };
    if h[..10].iter().any(|&v| !(1..=1 << 20).contains(&v)) {
        return Err(FileError::Damaged(format!(
            "its hyper-parameters are not plausible: {hp:?}"
        )));
    }
    let n_mel = w.i32("the filterbank")?;
    let n_fft = w.i32("the filterbank")?;
    if !(1..=512).contains(&n_mel) || !(1..=4096).contains(&n_fft) {
        return Err(FileError::Damaged(format!(
            "its filterbank is {n_mel} x {n_fft}, not plausible"
        )));
    }
    w.skip(n_mel as u64 * n_fft as u64 * 4, "the filterbank")?;
    let tokens = w.i32("the vocabulary")?;
    if !(0..=hp.n_vocab).contains(&tokens) {
        return Err(FileError::Damaged(format!(
            "it stores {tokens} tokens for a vocabulary of {}",
            hp.n_vocab
        )));
    }
    for _ in 0..tokens {
        let n = w.i32("the vocabulary")? as u32;
        if n > 1024 {
            return Err(FileError::Damaged(format!(
                "a token of {n} bytes at byte {} is not plausible",
                w.pos
            )));
        }
        w.skip(u64::from(n), "the vocabulary")?;
    }
    let mut tensors = 0usize;
    while w.pos < w.len {
        let at = w.pos;
        let n_dims = w.i32("a tensor header")?;
        let name_len = w.i32("a tensor header")?;
        let ttype = w.i32("a tensor header")?;
        if !(1..=4).contains(&n_dims) || !(1..=256).contains(&name_len) {
            return Err(FileError::Damaged(format!(
                "the tensor header at byte {at} is damaged"
            )));
        }
        let mut elements = 1u64;
        for _ in 0..n_dims {
            let d = w.i32("a tensor header")?;
            if d < 1 {
                return Err(FileError::Damaged(format!(
                    "the tensor at byte {at} has a dimension of {d}"
                )));
            }
            elements = elements.saturating_mul(d as u64);
        }
        let name =
            String::from_utf8_lossy(&w.bytes(name_len as usize, "a tensor name")?).into_owned();
        let (block, block_bytes) = type_size(ttype)
            .ok_or_else(|| FileError::Damaged(format!("tensor {name} has unknown type {ttype}")))?;
        if !elements.is_multiple_of(block) {
            return Err(FileError::Damaged(format!(
                "tensor {name} does not fill whole {block}-element blocks"
            )));
        }
        w.skip(elements / block * block_bytes, &format!("tensor {name}"))?;
        tensors += 1;
    }
    if tensors == 0 {
        return Err(FileError::Damaged("it holds no tensors".into()));
    }
    Ok(FileSummary {
        hparams: hp,
        tokens: tokens as usize,
        tensors,
    })
}

/// A cursor over a file that knows its length, so a skip past the end is caught as
/// truncation rather than discovered later.
struct Walker {
    r: BufReader<fs::File>,
    pos: u64,
    len: u64,
}

impl Walker {
    fn truncated(what: &str) -> FileError {
        FileError::Truncated(what.to_owned())
    }

    fn bytes(&mut self, n: usize, what: &str) -> Result<Vec<u8>, FileError> {
        let mut b = vec![0u8; n];
        self.r
            .read_exact(&mut b)
            .map_err(|_| Self::truncated(what))?;
        self.pos += n as u64;
        Ok(b)
    }

    fn i32(&mut self, what: &str) -> Result<i32, FileError> {
        let b = self.bytes(4, what)?;
        Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn skip(&mut self, n: u64, what: &str) -> Result<(), FileError> {
        if self.pos.saturating_add(n) > self.len {
            return Err(Self::truncated(what));
        }
        self.r.seek_relative(n as i64)?;
        self.pos += n;
        Ok(())
    }
}

/// Elements per block and bytes per block of a ggml tensor type.
fn type_size(ttype: i32) -> Option<(u64, u64)> {
    Some(match ttype {
        0 => (1, 4),      // f32
        1 | 30 => (1, 2), // f16, bf16
        2 => (32, 18),    // q4_0
        3 => (32, 20),    // q4_1
        6 => (32, 22),    // q5_0
        7 => (32, 24),    // q5_1
        8 => (32, 34),    // q8_0
        9 => (32, 36),    // q8_1
        10 => (256, 84),  // q2_K
        11 => (256, 110), // q3_K
        12 => (256, 144), // q4_K
        13 => (256, 176), // q5_K
        14 => (256, 210), // q6_K
        15 => (256, 292), // q8_K
        _ => return None,
    })
}

/// Number of FFT bins whisper's filterbank covers (`n_fft` 400 -> 201 bins).
pub const N_FFT_BINS: usize = 201;

/// Whisper's mel filterbank: Slaney-scale triangles with Slaney area normalisation over
/// 0-8 kHz for a 400-point FFT at 16 kHz, computed the way librosa's `filters.mel` does
/// (float64 arithmetic, float32 storage, normalisation applied to the stored values), so
/// the result matches the `mel_filters.npz` OpenAI ships. Row-major `n_mels x 201`.
pub fn mel_filters(n_mels: usize) -> Vec<f32> {
    const SR: f64 = 16_000.0;
    const N_FFT: usize = 400;
    let fft_freqs: Vec<f64> = (0..N_FFT_BINS)
        .map(|k| k as f64 * SR / N_FFT as f64)
        .collect();
    let max_mel = hz_to_mel(SR / 2.0);
    let n_points = n_mels + 2;
    let step = max_mel / (n_points - 1) as f64;
    let mel_f: Vec<f64> = (0..n_points)
        .map(|i| {
            if i == n_points - 1 {
                mel_to_hz(max_mel)
            } else {
                mel_to_hz(i as f64 * step)
            }
        })
        .collect();
    let mut out = Vec::with_capacity(n_mels * N_FFT_BINS);
    for i in 0..n_mels {
        let lower_d = mel_f[i + 1] - mel_f[i];
        let upper_d = mel_f[i + 2] - mel_f[i + 1];
        let enorm = 2.0 / (mel_f[i + 2] - mel_f[i]);
        for &f in &fft_freqs {
            let lower = -(mel_f[i] - f) / lower_d;
            let upper = (mel_f[i + 2] - f) / upper_d;
            // np.maximum(0, -0.0) keeps the -0.0 librosa gets at 0 Hz; so do we, byte for byte.
            let m = lower.min(upper);
            let w = if m < 0.0 { 0.0 } else { m as f32 };
            out.push((f64::from(w) * enorm) as f32);
        }
    }
    out
}

const F_SP: f64 = 200.0 / 3.0;
const MIN_LOG_HZ: f64 = 1000.0;
const MIN_LOG_MEL: f64 = MIN_LOG_HZ / F_SP;

fn log_step() -> f64 {
    6.4f64.ln() / 27.0
}

fn hz_to_mel(hz: f64) -> f64 {
    if hz >= MIN_LOG_HZ {
        MIN_LOG_MEL + (hz / MIN_LOG_HZ).ln() / log_step()
    } else {
        hz / F_SP
    }
}

fn mel_to_hz(mel: f64) -> f64 {
    if mel >= MIN_LOG_MEL {
        MIN_LOG_HZ * (log_step() * (mel - MIN_LOG_MEL)).exp()
    } else {
        F_SP * mel
    }
}

/// GPT-2's byte-level BPE shows each byte as a printable character; this undoes that, so a
/// token such as `Ġthe` becomes the bytes ` the`. `None` for a character outside the map.
pub fn bpe_token_bytes(token: &str) -> Option<Vec<u8>> {
    token.chars().map(byte_of_bpe_char).collect()
}

fn byte_of_bpe_char(c: char) -> Option<u8> {
    let c = c as u32;
    let printable = |b: u32| {
        (0x21..=0x7e).contains(&b) || (0xa1..=0xac).contains(&b) || (0xae..=0xff).contains(&b)
    };
    if printable(c) {
        return Some(c as u8);
    }
    // The other bytes, in increasing order, were given 256, 257, ...
    let n = c.checked_sub(256)?;
    (0u32..256)
        .filter(|&b| !printable(b))
        .nth(n as usize)
        .map(|b| b as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bpe_characters_map_back_to_bytes() {
        assert_eq!(bpe_token_bytes("Ġthe").unwrap(), b" the");
        assert_eq!(bpe_token_bytes("Ċ").unwrap(), b"\n");
        assert_eq!(bpe_token_bytes("hello").unwrap(), b"hello");
        assert_eq!(bpe_token_bytes("Ā").unwrap(), vec![0u8]);
        // "é" in UTF-8 is c3 a9; byte-level BPE shows those bytes as "Ã©".
        assert_eq!(bpe_token_bytes("Ã©").unwrap(), "é".as_bytes());
        assert!(bpe_token_bytes("\u{4e00}").is_none());
        let all: std::collections::BTreeSet<u8> = (0u32..=0x143)
            .filter_map(char::from_u32)
            .filter_map(byte_of_bpe_char)
            .collect();
        assert_eq!(all.len(), 256);
    }

    #[test]
    fn mel_filters_have_whisper_shape_and_known_values() {
        let f = mel_filters(80);
        assert_eq!(f.len(), 80 * 201);
        // Every filter is a non-empty triangle; bin 0 and the top bin are in none.
        for row in f.chunks(201) {
            assert!(row.iter().any(|&w| w > 0.0));
            assert!(row.iter().all(|&w| w >= 0.0));
        }
        assert_eq!(f[0].to_bits(), (-0.0f32).to_bits());
        // Slaney normalisation makes each triangle's height 2 / its width in Hz. The first
        // spans 0 to 74.5 Hz (82 points evenly spaced in mels over 0-8 kHz), so its height
        // is 0.0268, and the 40 Hz bin sits 0.93 of the way up its falling edge.
        assert!((f[1] - 0.024_862_59).abs() < 1e-8, "{}", f[1]);
        assert_eq!(mel_filters(128).len(), 128 * 201);
    }

    #[test]
    fn mel_filters_are_bit_exact_with_openais_mel_filters_npz() {
        // SHA-256 of the little-endian f32 bytes of `mel_80` and `mel_128` in
        // whisper/assets/mel_filters.npz (openai-whisper 20250625 on PyPI).
        use sha2::{Digest, Sha256};
        let hash = |n| {
            let bytes: Vec<u8> = mel_filters(n)
                .iter()
                .flat_map(|f| f.to_le_bytes())
                .collect();
            format!("{:x}", Sha256::digest(&bytes))
        };
        assert_eq!(
            hash(80),
            "4f2701b1d287d74a0dc9871026e9519d98cb76426615f2539b0d151a0ae4ec2e"
        );
        assert_eq!(
            hash(128),
            "2a5f9822897750e047c85dea37cc268d3be0ecfd23c28a5f10da129d99d05afe"
        );
    }

    fn dequantized(block: &[u8]) -> Vec<f32> {
        let scale = half::f16::from_le_bytes([block[0], block[1]]).to_f32();
        block[2..]
            .iter()
            .map(|&q| f32::from(q as i8) * scale)
            .collect()
    }

    #[test]
    fn a_q8_0_block_scales_its_largest_magnitude_to_127_and_rounds_the_rest() {
        // -8.0, -7.5, ..., 7.5: the largest magnitude is 8, so the scale is 8/127.
        let values: Vec<f32> = (0..32).map(|i| i as f32 * 0.5 - 8.0).collect();
        let block = q8_0_block(&values);
        let q: Vec<i8> = block[2..].iter().map(|&b| b as i8).collect();
        assert_eq!(q[0], -127);
        assert_eq!(q[16], 0);
        assert_eq!(q[31], 119, "7.5 * 127/8 = 119.06");
        assert_eq!(q[17], 8, "0.5 * 127/8 = 7.94");
        let scale = half::f16::from_le_bytes([block[0], block[1]]).to_f32();
        for (v, back) in values.iter().zip(dequantized(&block)) {
            assert!(
                (v - back).abs() <= scale * 0.5 + 1e-3,
                "{v} came back as {back}"
            );
        }
    }

    #[test]
    fn a_silent_q8_0_block_is_all_zero_and_a_row_of_partial_blocks_is_refused() {
        assert_eq!(q8_0_block(&[0.0; 32]), [0u8; 34]);
        let mut out = Vec::new();
        write_tensor(&mut out, "w", &[2, 64], TensorType::Q8_0, &[1.0; 128]).unwrap();
        // Header: rank, name length, type, 2 dimensions, 1-byte name; then 4 blocks.
        assert_eq!(out.len(), 4 * 5 + 1 + 4 * 34);
        assert_eq!(out[8..12], 8i32.to_le_bytes(), "ggml's type id of q8_0");
        let err =
            write_tensor(&mut Vec::new(), "w", &[2, 48], TensorType::Q8_0, &[1.0; 96]).unwrap_err();
        assert!(err.to_string().contains("whole q8_0 blocks"), "{err}");
    }

    #[test]
    fn the_weight_type_is_named_with_or_without_the_quantisation_version() {
        assert_eq!(weight_type_name(1), "f16");
        assert_eq!(weight_type_name(FTYPE_Q8_0), "q8_0");
        assert_eq!(weight_type_name(7), "q8_0");
        assert_eq!(weight_type_name(2009), "q5_1");
        assert_eq!(weight_type_name(99), "an unknown weight type");
    }
}
