//! `yazses model import`: a faster-whisper (CTranslate2) model directory into a ggml file.
//!
//! CTranslate2 names whisper's layers its own way (`encoder/layer_0/self_attention/linear_0`)
//! and fuses the attention projections (query, key and value in one `[3d, d]` matrix in the
//! self-attention; key and value in one `[2d, d]` matrix in the cross-attention). The
//! importer maps each variable to the name whisper.cpp looks for
//! (`encoder.blocks.0.attn.query.weight`), splits the fused matrices, dequantizes int8
//! weights, and writes weights as f16 and biases, norms and positional embeddings as f32,
//! the types whisper.cpp expects of an f16 model; or, with [`Weights::Q8_0`], the weight
//! matrices as ggml's q8_0 (the convolutions stay f16, as whisper.cpp wants them). Every
//! variable's shape is checked against the shape the model's own hyper-parameters imply;
//! a mismatch is refused with both.
//!
//! The key projections' biases are dropped: whisper has none, and a bias on the key adds
//! the same amount to every score of a query, which the softmax removes.

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::ct2::{self, Ct2Error, Ct2Model, DType};
use super::ggml::{self, Hparams, TensorType};

/// Why a model directory could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// A file could not be read or written.
    #[error("cannot access {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The reason.
        source: io::Error,
    },
    /// The directory lacks a file a CTranslate2 model has.
    #[error("{dir} is not a faster-whisper model directory: it has no {what}")]
    MissingFile {
        /// The directory.
        dir: PathBuf,
        /// What is missing.
        what: &'static str,
    },
    /// `model.bin` is damaged or not a CTranslate2 model.
    #[error("{path} is not a readable CTranslate2 model: {source}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What the reader found.
        source: Ct2Error,
    },
    /// A CTranslate2 model of something other than whisper.
    #[error("the model is a {found}, not a WhisperSpec model")]
    NotWhisper {
        /// The spec the file names.
        found: String,
    },
    /// A variable whisper needs is absent.
    #[error("the model has no variable {name}")]
    Missing {
        /// The CTranslate2 name.
        name: String,
    },
    /// A variable has the wrong shape.
    #[error("{name} has shape {found:?}; expected {expected:?}")]
    Shape {
        /// The CTranslate2 name.
        name: String,
        /// What the hyper-parameters imply.
        expected: Vec<usize>,
        /// What the file has.
        found: Vec<usize>,
    },
    /// A variable's type cannot be turned into floats.
    #[error("{name} is stored as {dtype:?} with no scale to dequantize it")]
    DType {
        /// The CTranslate2 name.
        name: String,
        /// Its type.
        dtype: DType,
    },
    /// The vocabulary does not fit the model.
    #[error("the vocabulary does not fit the model: {0}")]
    Vocab(String),
}

/// What an import produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportReport {
    /// The model's shape.
    pub hparams: Hparams,
    /// Tensors written.
    pub tensors: usize,
    /// Ordinary (non-special) tokens written.
    pub tokens: usize,
    /// The source weights' type.
    pub source_dtype: String,
    /// Bytes written.
    pub bytes: u64,
}

/// How the weight matrices are stored (`yazses model import --weights`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Weights {
    /// Half floats: the layout, size and bytes of whisper.cpp's own f16 files.
    #[default]
    #[value(name = "f16")]
    F16,
    /// ggml's 8-bit blocks of 32 values with one scale each: about half the size, and
    /// faster on the CPU, since the matrix products run on 8-bit integers. Finer than an
    /// int8 CTranslate2 model (one scale per row), so such a model loses nothing more.
    #[value(name = "q8_0")]
    Q8_0,
}

impl Weights {
    fn tensor_type(self) -> TensorType {
        match self {
            Weights::F16 => TensorType::F16,
            Weights::Q8_0 => TensorType::Q8_0,
        }
    }

    fn ftype(self) -> i32 {
        match self {
            Weights::F16 => 1,
            Weights::Q8_0 => ggml::FTYPE_Q8_0,
        }
    }
}

/// Converts the CTranslate2 model in `dir` into a ggml file at `out` with its weight
/// matrices stored as `weights`, written to a temporary file beside it and renamed into
/// place, so `out` is never half-written.
pub fn import_dir(dir: &Path, out: &Path, weights: Weights) -> Result<ImportReport, ImportError> {
    let bin = dir.join("model.bin");
    if !bin.is_file() {
        return Err(ImportError::MissingFile {
            dir: dir.to_owned(),
            what: "model.bin",
        });
    }
    let io_err = |path: &Path| {
        let path = path.to_owned();
        move |source| ImportError::Io { path, source }
    };
    let vocab = read_vocabulary(dir)?;
    let bytes = fs::read(&bin).map_err(io_err(&bin))?;
    let model = ct2::parse(&bytes).map_err(|source| ImportError::Format {
        path: bin.clone(),
        source,
    })?;
    drop(bytes);
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(io_err(parent))?;
    }
    let tmp = out.with_extension("import-tmp");
    let result = (|| {
        let file = fs::File::create(&tmp).map_err(io_err(&tmp))?;
        let mut w = BufWriter::new(file);
        let mut report = convert(&model, &vocab, weights, &mut w).map_err(|e| match e {
            ConvertError::Import(e) => e,
            ConvertError::Io(source) => ImportError::Io {
                path: tmp.clone(),
                source,
            },
        })?;
        let file = w.into_inner().map_err(|e| io_err(&tmp)(e.into_error()))?;
        file.sync_all().map_err(io_err(&tmp))?;
        report.bytes = file.metadata().map_err(io_err(&tmp))?.len();
        fs::rename(&tmp, out).map_err(io_err(out))?;
        Ok(report)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Reads the token list: `vocabulary.txt` (one per line), `vocabulary.json` (an array) or
/// `tokenizer.json` (the Hugging Face tokenizer, ids in `model.vocab` and `added_tokens`).
pub fn read_vocabulary(dir: &Path) -> Result<Vec<String>, ImportError> {
    let io_err = |path: &Path| {
        let path = path.to_owned();
        move |source| ImportError::Io { path, source }
    };
    let txt = dir.join("vocabulary.txt");
    if txt.is_file() {
        let text = fs::read_to_string(&txt).map_err(io_err(&txt))?;
        return Ok(text.lines().map(str::to_owned).collect());
    }
    let json = dir.join("vocabulary.json");
    if json.is_file() {
        let text = fs::read_to_string(&json).map_err(io_err(&json))?;
        return serde_json::from_str(&text)
            .map_err(|e| ImportError::Vocab(format!("{}: {e}", json.display())));
    }
    let tok = dir.join("tokenizer.json");
    if tok.is_file() {
        let text = fs::read_to_string(&tok).map_err(io_err(&tok))?;
        return vocabulary_from_tokenizer(&text)
            .map_err(|e| ImportError::Vocab(format!("{}: {e}", tok.display())));
    }
    Err(ImportError::MissingFile {
        dir: dir.to_owned(),
        what: "vocabulary.txt, vocabulary.json or tokenizer.json",
    })
}

/// Why a `tokenizer.json` gives no vocabulary.
#[derive(Debug, thiserror::Error)]
enum TokenizerError {
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error("it has no model.vocab object")]
    NoVocab,
    #[error("a token id is not a number")]
    IdNotNumber,
    #[error("token id {0} is not plausible")]
    Implausible(usize),
    #[error("no token has id {0}")]
    Gap(usize),
}

fn vocabulary_from_tokenizer(text: &str) -> Result<Vec<String>, TokenizerError> {
    let v: serde_json::Value = serde_json::from_str(text)?;
    let mut by_id: Vec<Option<String>> = Vec::new();
    let mut put = |id: u64, s: &str| {
        let id = id as usize;
        if id >= 1 << 20 {
            return Err(TokenizerError::Implausible(id));
        }
        if by_id.len() <= id {
            by_id.resize(id + 1, None);
        }
        by_id[id] = Some(s.to_owned());
        Ok(())
    };
    let vocab = v["model"]["vocab"]
        .as_object()
        .ok_or(TokenizerError::NoVocab)?;
    for (tok, id) in vocab {
        put(id.as_u64().ok_or(TokenizerError::IdNotNumber)?, tok)?;
    }
    for added in v["added_tokens"].as_array().into_iter().flatten() {
        if let (Some(id), Some(s)) = (added["id"].as_u64(), added["content"].as_str()) {
            put(id, s)?;
        }
    }
    by_id
        .into_iter()
        .enumerate()
        .map(|(i, t)| t.ok_or(TokenizerError::Gap(i)))
        .collect()
}

/// Conversion failures: a model problem, or the output's I/O.
#[derive(Debug)]
pub enum ConvertError {
    /// The model does not convert.
    Import(ImportError),
    /// Writing failed.
    Io(io::Error),
}

impl From<ImportError> for ConvertError {
    fn from(e: ImportError) -> Self {
        ConvertError::Import(e)
    }
}

impl From<io::Error> for ConvertError {
    fn from(e: io::Error) -> Self {
        ConvertError::Io(e)
    }
}

/// Writes the ggml file for a parsed model and its token list, the weight matrices as
/// `weights`.
pub fn convert<W: Write>(
    model: &Ct2Model,
    vocab: &[String],
    weights: Weights,
    out: &mut W,
) -> Result<ImportReport, ConvertError> {
    if model.spec != "WhisperSpec" {
        return Err(ImportError::NotWhisper {
            found: model.spec.clone(),
        }
        .into());
    }
    let src = Source(model);
    let hp = hparams(&src, weights)?;
    let tokens = ggml_tokens(vocab, hp.n_vocab as usize)?;
    ggml::write_header(
        out,
        &hp,
        &ggml::mel_filters(hp.n_mels as usize),
        ggml::N_FFT_BINS,
        &tokens,
    )?;
    let mut w = TensorWriter {
        out,
        count: 0,
        matrix: weights.tensor_type(),
    };
    w.encoder(&src, &hp)?;
    w.decoder(&src, &hp)?;
    let source_dtype = format!("{:?}", src.var("decoder/embeddings/weight")?.dtype).to_lowercase();
    Ok(ImportReport {
        hparams: hp,
        tensors: w.count,
        tokens: tokens.len(),
        source_dtype,
        bytes: 0,
    })
}

/// The model's shape, read from its tensors' shapes, for whisper.cpp's header.
fn hparams(src: &Source, weights: Weights) -> Result<Hparams, ImportError> {
    let conv1 = src.var("encoder/conv1/weight")?;
    let (d_a, n_mels) = match conv1.shape[..] {
        [d, m, 3] => (d, m),
        _ => {
            return Err(ImportError::Shape {
                name: "encoder/conv1/weight".into(),
                expected: vec![0, 80, 3],
                found: conv1.shape.clone(),
            });
        }
    };
    let emb = src.var("decoder/embeddings/weight")?;
    let (n_vocab, d_t) = match emb.shape[..] {
        [v, d] => (v, d),
        _ => {
            return Err(ImportError::Shape {
                name: "decoder/embeddings/weight".into(),
                expected: vec![51864, 0],
                found: emb.shape.clone(),
            });
        }
    };
    let hp = Hparams {
        n_vocab: n_vocab as i32,
        n_audio_ctx: src.dim("encoder/position_encodings/encodings", 0)? as i32,
        n_audio_state: d_a as i32,
        n_audio_head: src.heads("encoder", d_a),
        n_audio_layer: src.layers("encoder") as i32,
        n_text_ctx: src.dim("decoder/position_encodings/encodings", 0)? as i32,
        n_text_state: d_t as i32,
        n_text_head: src.heads("decoder", d_t),
        n_text_layer: src.layers("decoder") as i32,
        n_mels: n_mels as i32,
        ftype: weights.ftype(),
    };
    if hp.n_audio_layer == 0 || hp.n_text_layer == 0 {
        return Err(ImportError::Missing {
            name: "encoder/layer_0 and decoder/layer_0".into(),
        });
    }
    Ok(hp)
}

/// The ordinary tokens and <|endoftext|> as bytes, as whisper.cpp's own converter writes
/// them (whisper.cpp names the special tokens after it itself), for an embedding of
/// `n_vocab` rows.
fn ggml_tokens(vocab: &[String], n_vocab: usize) -> Result<Vec<Vec<u8>>, ImportError> {
    let eot = vocab
        .iter()
        .position(|t| t == "<|endoftext|>")
        .ok_or_else(|| ImportError::Vocab("it has no <|endoftext|> token".into()))?;
    if vocab.len() != n_vocab {
        return Err(ImportError::Vocab(format!(
            "{} tokens for an embedding of {n_vocab} rows",
            vocab.len()
        )));
    }
    vocab[..=eot]
        .iter()
        .map(|t| {
            ggml::bpe_token_bytes(t)
                .ok_or_else(|| ImportError::Vocab(format!("token {t:?} is not byte-level BPE")))
        })
        .collect()
}

struct Source<'a>(&'a Ct2Model);

impl Source<'_> {
    fn var(&self, name: &str) -> Result<&ct2::Variable, ImportError> {
        self.0.get(name).ok_or_else(|| ImportError::Missing {
            name: name.to_owned(),
        })
    }

    fn dim(&self, name: &str, axis: usize) -> Result<usize, ImportError> {
        let v = self.var(name)?;
        v.shape
            .get(axis)
            .copied()
            .ok_or_else(|| ImportError::Shape {
                name: name.to_owned(),
                expected: vec![0; axis + 1],
                found: v.shape.clone(),
            })
    }

    /// `num_heads` when the model records it; whisper's 64-wide heads otherwise.
    fn heads(&self, stack: &str, width: usize) -> i32 {
        self.0
            .get(&format!("{stack}/num_heads"))
            .and_then(|v| v.scalar_int())
            .map_or(width as i32 / 64, |h| h as i32)
    }

    fn layers(&self, stack: &str) -> usize {
        (0..)
            .take_while(|i| {
                let prefix = format!("{stack}/layer_{i}/");
                self.0
                    .variables
                    .range(prefix.clone()..)
                    .next()
                    .is_some_and(|(k, _)| k.starts_with(&prefix))
            })
            .count()
    }

    /// A variable as floats, shape-checked, int8 weights dequantized with their scales.
    fn matrix(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, ImportError> {
        let v = self.var(name)?;
        if v.shape != shape {
            return Err(ImportError::Shape {
                name: name.to_owned(),
                expected: shape.to_vec(),
                found: v.shape.clone(),
            });
        }
        if let Some(f) = v.to_f32() {
            return Ok(f);
        }
        let dtype_err = || ImportError::DType {
            name: name.to_owned(),
            dtype: v.dtype,
        };
        if v.dtype != DType::I8 || shape.len() != 2 {
            return Err(dtype_err());
        }
        // CTranslate2 quantizes each row as round(w * scale) with scale = 127 / max|row|.
        let scales = self
            .0
            .get(&format!("{name}_scale"))
            .and_then(|s| s.to_f32())
            .filter(|s| s.len() == shape[0])
            .ok_or_else(dtype_err)?;
        Ok(v.data
            .chunks(shape[1])
            .zip(&scales)
            .flat_map(|(row, &scale)| row.iter().map(move |&q| f32::from(q as i8) / scale))
            .collect())
    }
}

struct TensorWriter<'w, W: Write> {
    out: &'w mut W,
    count: usize,
    /// The type of the weight matrices (not the convolutions).
    matrix: TensorType,
}

impl<W: Write> TensorWriter<'_, W> {
    fn raw(
        &mut self,
        name: &str,
        shape: &[usize],
        ty: TensorType,
        values: &[f32],
    ) -> Result<(), ConvertError> {
        ggml::write_tensor(self.out, name, shape, ty, values)?;
        self.count += 1;
        Ok(())
    }

    fn put_as(
        &mut self,
        src: &Source,
        from: &str,
        shape: &[usize],
        out_shape: &[usize],
        to: &str,
        ty: TensorType,
    ) -> Result<(), ConvertError> {
        let values = src.matrix(from, shape)?;
        self.raw(to, out_shape, ty, &values)
    }

    fn put(
        &mut self,
        src: &Source,
        from: &str,
        shape: &[usize],
        to: &str,
        ty: TensorType,
    ) -> Result<(), ConvertError> {
        self.put_as(src, from, shape, shape, to, ty)
    }

    fn linear(
        &mut self,
        src: &Source,
        from: &str,
        to: &str,
        rows: usize,
        cols: usize,
    ) -> Result<(), ConvertError> {
        self.put(
            src,
            &format!("{from}/weight"),
            &[rows, cols],
            &format!("{to}.weight"),
            self.matrix,
        )?;
        self.put(
            src,
            &format!("{from}/bias"),
            &[rows],
            &format!("{to}.bias"),
            TensorType::F32,
        )
    }

    fn norm(&mut self, src: &Source, from: &str, to: &str, d: usize) -> Result<(), ConvertError> {
        self.put(
            src,
            &format!("{from}/gamma"),
            &[d],
            &format!("{to}.weight"),
            TensorType::F32,
        )?;
        self.put(
            src,
            &format!("{from}/beta"),
            &[d],
            &format!("{to}.bias"),
            TensorType::F32,
        )
    }

    /// Fused query/key/value, split into whisper's three projections, then the output.
    fn self_attention(
        &mut self,
        src: &Source,
        from: &str,
        to: &str,
        d: usize,
    ) -> Result<(), ConvertError> {
        let qkv = src.matrix(&format!("{from}/linear_0/weight"), &[3 * d, d])?;
        let qkv_b = src.matrix(&format!("{from}/linear_0/bias"), &[3 * d])?;
        let dd = d * d;
        self.raw(
            &format!("{to}.query.weight"),
            &[d, d],
            self.matrix,
            &qkv[..dd],
        )?;
        self.raw(
            &format!("{to}.query.bias"),
            &[d],
            TensorType::F32,
            &qkv_b[..d],
        )?;
        self.raw(
            &format!("{to}.key.weight"),
            &[d, d],
            self.matrix,
            &qkv[dd..2 * dd],
        )?;
        self.raw(
            &format!("{to}.value.weight"),
            &[d, d],
            self.matrix,
            &qkv[2 * dd..],
        )?;
        self.raw(
            &format!("{to}.value.bias"),
            &[d],
            TensorType::F32,
            &qkv_b[2 * d..],
        )?;
        self.linear(src, &format!("{from}/linear_1"), &format!("{to}.out"), d, d)
    }

    /// A block's self-attention and its layer norm, in whisper's order.
    fn self_attention_block(
        &mut self,
        src: &Source,
        layer: &str,
        block: &str,
        d: usize,
    ) -> Result<(), ConvertError> {
        let attn = format!("{layer}/self_attention");
        self.self_attention(src, &attn, &format!("{block}.attn"), d)?;
        self.norm(
            src,
            &format!("{attn}/layer_norm"),
            &format!("{block}.attn_ln"),
            d,
        )
    }

    /// The encoder's tensors, in whisper.cpp's order: positions, the two convolutions,
    /// the blocks, the final norm.
    fn encoder(&mut self, src: &Source, hp: &Hparams) -> Result<(), ConvertError> {
        let (d, ctx, n_mels) = (
            hp.n_audio_state as usize,
            hp.n_audio_ctx as usize,
            hp.n_mels as usize,
        );
        self.put(
            src,
            "encoder/position_encodings/encodings",
            &[ctx, d],
            "encoder.positional_embedding",
            TensorType::F32,
        )?;
        for (conv, inputs) in [("conv1", n_mels), ("conv2", d)] {
            self.put(
                src,
                &format!("encoder/{conv}/weight"),
                &[d, inputs, 3],
                &format!("encoder.{conv}.weight"),
                TensorType::F16,
            )?;
            self.put_as(
                src,
                &format!("encoder/{conv}/bias"),
                &[d],
                &[d, 1],
                &format!("encoder.{conv}.bias"),
                TensorType::F32,
            )?;
        }
        for i in 0..hp.n_audio_layer {
            let (s, o) = (format!("encoder/layer_{i}"), format!("encoder.blocks.{i}"));
            self.self_attention_block(src, &s, &o, d)?;
            self.mlp(src, &s, &o, d)?;
        }
        self.norm(src, "encoder/layer_norm", "encoder.ln_post", d)
    }

    /// The decoder's tensors: positions, the token embedding, the blocks with their
    /// cross-attention, the final norm.
    fn decoder(&mut self, src: &Source, hp: &Hparams) -> Result<(), ConvertError> {
        let d = hp.n_text_state as usize;
        let matrix = self.matrix;
        self.put(
            src,
            "decoder/position_encodings/encodings",
            &[hp.n_text_ctx as usize, d],
            "decoder.positional_embedding",
            TensorType::F32,
        )?;
        self.put(
            src,
            "decoder/embeddings/weight",
            &[hp.n_vocab as usize, d],
            "decoder.token_embedding.weight",
            matrix,
        )?;
        for i in 0..hp.n_text_layer {
            let (s, o) = (format!("decoder/layer_{i}"), format!("decoder.blocks.{i}"));
            self.self_attention_block(src, &s, &o, d)?;
            self.cross_attention(src, &s, &o, d)?;
            self.mlp(src, &s, &o, d)?;
        }
        self.norm(src, "decoder/layer_norm", "decoder.ln", d)
    }

    /// Cross-attention: the query alone, then key and value fused, then the output and
    /// its norm.
    fn cross_attention(
        &mut self,
        src: &Source,
        layer: &str,
        block: &str,
        d: usize,
    ) -> Result<(), ConvertError> {
        let (a, c) = (format!("{layer}/attention"), format!("{block}.cross_attn"));
        let matrix = self.matrix;
        self.linear(src, &format!("{a}/linear_0"), &format!("{c}.query"), d, d)?;
        let kv = src.matrix(&format!("{a}/linear_1/weight"), &[2 * d, d])?;
        let kv_b = src.matrix(&format!("{a}/linear_1/bias"), &[2 * d])?;
        self.raw(&format!("{c}.key.weight"), &[d, d], matrix, &kv[..d * d])?;
        self.raw(&format!("{c}.value.weight"), &[d, d], matrix, &kv[d * d..])?;
        self.raw(
            &format!("{c}.value.bias"),
            &[d],
            TensorType::F32,
            &kv_b[d..],
        )?;
        self.linear(src, &format!("{a}/linear_2"), &format!("{c}.out"), d, d)?;
        self.norm(
            src,
            &format!("{a}/layer_norm"),
            &format!("{block}.cross_attn_ln"),
            d,
        )
    }

    /// In PyTorch's order (mlp.0, mlp.2, then mlp_ln), which whisper.cpp's converter keeps.
    fn mlp(&mut self, src: &Source, from: &str, to: &str, d: usize) -> Result<(), ConvertError> {
        let hidden = src.dim(&format!("{from}/ffn/linear_0/weight"), 0)?;
        let (ffn, mlp) = (format!("{from}/ffn"), format!("{to}.mlp"));
        self.linear(
            src,
            &format!("{ffn}/linear_0"),
            &format!("{mlp}.0"),
            hidden,
            d,
        )?;
        self.linear(
            src,
            &format!("{ffn}/linear_1"),
            &format!("{mlp}.2"),
            d,
            hidden,
        )?;
        self.norm(
            src,
            &format!("{ffn}/layer_norm"),
            &format!("{to}.mlp_ln"),
            d,
        )
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::model::ct2::Variable;

    /// One head, whisper's width per head.
    const D: usize = 64;
    const MELS: usize = 80;
    const CTX: usize = 4;

    fn floats(shape: &[usize]) -> Variable {
        let n: usize = shape.iter().product();
        Variable {
            shape: shape.to_vec(),
            dtype: DType::F32,
            data: (0..n)
                .flat_map(|i| ((i % 7) as f32 / 7.0 - 0.4).to_le_bytes())
                .collect(),
        }
    }

    /// A whisper model of one encoder block and one decoder block, with `n_vocab` token
    /// rows, in CTranslate2's names and layout.
    fn tiny_whisper(n_vocab: usize) -> Ct2Model {
        let mut v = BTreeMap::new();
        let mut put = |name: &str, shape: &[usize]| {
            v.insert(name.to_owned(), floats(shape));
        };
        let linear = |put: &mut dyn FnMut(&str, &[usize]), name: &str, rows, cols| {
            put(&format!("{name}/weight"), &[rows, cols]);
            put(&format!("{name}/bias"), &[rows]);
        };
        let norm = |put: &mut dyn FnMut(&str, &[usize]), name: &str| {
            put(&format!("{name}/gamma"), &[D]);
            put(&format!("{name}/beta"), &[D]);
        };
        put("encoder/conv1/weight", &[D, MELS, 3]);
        put("encoder/conv1/bias", &[D]);
        put("encoder/conv2/weight", &[D, D, 3]);
        put("encoder/conv2/bias", &[D]);
        put("decoder/embeddings/weight", &[n_vocab, D]);
        for stack in ["encoder", "decoder"] {
            put(&format!("{stack}/position_encodings/encodings"), &[CTX, D]);
            let layer = format!("{stack}/layer_0");
            linear(
                &mut put,
                &format!("{layer}/self_attention/linear_0"),
                3 * D,
                D,
            );
            linear(&mut put, &format!("{layer}/self_attention/linear_1"), D, D);
            norm(&mut put, &format!("{layer}/self_attention/layer_norm"));
            linear(&mut put, &format!("{layer}/ffn/linear_0"), 2 * D, D);
            linear(&mut put, &format!("{layer}/ffn/linear_1"), D, 2 * D);
            norm(&mut put, &format!("{layer}/ffn/layer_norm"));
            norm(&mut put, &format!("{stack}/layer_norm"));
        }
        let cross = "decoder/layer_0/attention";
        linear(&mut put, &format!("{cross}/linear_0"), D, D);
        linear(&mut put, &format!("{cross}/linear_1"), 2 * D, D);
        linear(&mut put, &format!("{cross}/linear_2"), D, D);
        norm(&mut put, &format!("{cross}/layer_norm"));
        Ct2Model {
            version: 6,
            spec: "WhisperSpec".into(),
            spec_revision: 3,
            variables: v,
            aliases: BTreeMap::new(),
        }
    }

    fn vocab(tokens: &[&str]) -> Vec<String> {
        tokens.iter().map(|&t| t.to_owned()).collect()
    }

    /// Converts into a file and walks it as a model load would.
    fn converted(
        model: &Ct2Model,
        vocab: &[String],
        weights: Weights,
    ) -> Result<(ImportReport, ggml::FileSummary), ConvertError> {
        let mut bytes = Vec::new();
        let report = convert(model, vocab, weights, &mut bytes)?;
        let path = std::env::temp_dir().join(format!(
            "yazses-import-{}-{weights:?}.bin",
            std::process::id()
        ));
        std::fs::write(&path, &bytes).unwrap();
        let summary = ggml::check_file(&path);
        std::fs::remove_file(&path).unwrap();
        Ok((
            report,
            summary.expect("the converted file is a whole ggml model"),
        ))
    }

    #[test]
    fn a_one_block_model_becomes_a_whole_ggml_file_with_every_tensor_whisper_cpp_loads() {
        let tokens = vocab(&["a", "\u{120}b", "<|endoftext|>"]);
        for weights in [Weights::F16, Weights::Q8_0] {
            let (report, file) = converted(&tiny_whisper(3), &tokens, weights).unwrap();
            let hp = report.hparams;
            assert_eq!(
                (
                    hp.n_vocab,
                    hp.n_audio_ctx,
                    hp.n_audio_state,
                    hp.n_audio_head
                ),
                (3, CTX as i32, D as i32, 1)
            );
            assert_eq!((hp.n_audio_layer, hp.n_text_layer, hp.n_mels), (1, 1, 80));
            assert_eq!(hp.ftype, weights.ftype());
            assert_eq!(file.hparams, hp);
            // Encoder: positions, 2 convolutions (weight, bias), a block of 15 (attention
            // 7, its norm 2, the MLP 4, its norm 2), the final norm 2. Decoder: positions,
            // tokens, a block of 24 (the encoder's 15 and cross-attention 9), its norm 2.
            assert_eq!(report.tensors, 1 + 4 + 15 + 2 + 2 + 24 + 2);
            assert_eq!(file.tensors, report.tensors);
            assert_eq!((report.tokens, file.tokens), (3, 3));
            assert_eq!(report.source_dtype, "f32");
        }
    }

    #[test]
    fn the_same_model_converts_to_the_same_bytes() {
        let tokens = vocab(&["a", "<|endoftext|>"]);
        let once = |weights| {
            let mut out = Vec::new();
            convert(&tiny_whisper(2), &tokens, weights, &mut out).unwrap();
            out
        };
        assert_eq!(once(Weights::Q8_0), once(Weights::Q8_0));
        assert_ne!(once(Weights::Q8_0), once(Weights::F16));
    }

    fn refusal(model: &Ct2Model, tokens: &[&str]) -> ImportError {
        match convert(model, &vocab(tokens), Weights::F16, &mut Vec::new()) {
            Err(ConvertError::Import(e)) => e,
            Err(ConvertError::Io(e)) => panic!("an I/O error instead of a refusal: {e}"),
            Ok(_) => panic!("converted"),
        }
    }

    #[test]
    fn a_model_that_does_not_fit_whisper_is_refused_naming_what_is_wrong() {
        let tokens = ["a", "<|endoftext|>"];
        let mut other = tiny_whisper(2);
        other.spec = "TransformerSpec".into();
        assert!(
            matches!(refusal(&other, &tokens), ImportError::NotWhisper { found } if found == "TransformerSpec")
        );

        let mut no_cross = tiny_whisper(2);
        no_cross
            .variables
            .remove("decoder/layer_0/attention/linear_1/weight");
        assert!(matches!(
            refusal(&no_cross, &tokens),
            ImportError::Missing { name } if name == "decoder/layer_0/attention/linear_1/weight"
        ));

        let mut no_layers = tiny_whisper(2);
        no_layers
            .variables
            .retain(|name, _| !name.starts_with("encoder/layer_0/"));
        assert!(matches!(
            refusal(&no_layers, &tokens),
            ImportError::Missing { .. }
        ));

        let mut flat = tiny_whisper(2);
        flat.variables
            .insert("encoder/conv1/weight".into(), floats(&[D, MELS]));
        assert!(matches!(
            refusal(&flat, &tokens),
            ImportError::Shape { found, .. } if found == [D, MELS]
        ));

        let mut unscaled = tiny_whisper(2);
        let ffn = unscaled
            .variables
            .get_mut("encoder/layer_0/ffn/linear_0/weight")
            .unwrap();
        ffn.dtype = DType::I8;
        ffn.data.truncate(2 * D * D);
        assert!(matches!(
            refusal(&unscaled, &tokens),
            ImportError::DType {
                dtype: DType::I8,
                ..
            }
        ));
    }

    #[test]
    fn a_vocabulary_that_does_not_fit_the_model_is_refused() {
        let model = tiny_whisper(2);
        for (tokens, says) in [
            (&["a", "b"][..], "no <|endoftext|>"),
            (
                &["a", "b", "<|endoftext|>"][..],
                "3 tokens for an embedding of 2 rows",
            ),
            (&["a b", "<|endoftext|>"][..], "not byte-level BPE"),
        ] {
            let e = refusal(&model, tokens);
            assert!(matches!(e, ImportError::Vocab(_)), "{e}");
            assert!(e.to_string().contains(says), "{e}");
        }
    }

    #[test]
    fn a_tokenizer_json_gives_its_tokens_by_id_added_tokens_included() {
        let json = r#"{"model": {"vocab": {"b": 1, "a": 0}},
            "added_tokens": [{"id": 2, "content": "<|endoftext|>"}]}"#;
        assert_eq!(
            vocabulary_from_tokenizer(json).unwrap(),
            vocab(&["a", "b", "<|endoftext|>"])
        );
        let refused = |json: &str| vocabulary_from_tokenizer(json).unwrap_err();
        assert!(matches!(
            refused(r#"{"model": {"vocab": {"a": 0, "c": 2}}}"#),
            TokenizerError::Gap(1)
        ));
        assert!(matches!(
            refused(r#"{"model": {"vocab": {"a": "0"}}}"#),
            TokenizerError::IdNotNumber
        ));
        assert!(matches!(
            refused(r#"{"model": {"vocab": {"a": 9999999}}}"#),
            TokenizerError::Implausible(_)
        ));
        assert!(matches!(
            refused(r#"{"model": {}}"#),
            TokenizerError::NoVocab
        ));
        assert!(matches!(refused("{"), TokenizerError::Json(_)));
    }
}
