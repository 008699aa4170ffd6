//! Reading a CTranslate2 `model.bin`: the format faster-whisper models ship in.
//!
//! The file is little-endian: a `u32` binary version, then (version 2 and later) the spec
//! name as a length-prefixed string and a `u32` spec revision, then a `u32` count of
//! variables, each a name, a `u8` rank, `rank` dimensions as `u32`, a `u8` data type and a
//! `u32` byte count followed by the data; then (version 3 and later) a `u32` count of
//! aliases, each two strings (the alias, then the variable it names). Strings are a `u16`
//! length followed by that many bytes, the last of which is a NUL.
//!
//! The reader is strict: every variable's byte count must equal its shape times its
//! element size, and the file must end exactly after the aliases. A file that breaks any
//! of these is refused with the offset where it went wrong, so a damaged model is never
//! half-loaded.

use std::collections::BTreeMap;

/// The binary versions whose layout this reader knows (the data type byte arrived in 4).
pub const SUPPORTED_VERSIONS: std::ops::RangeInclusive<u32> = 4..=6;

/// A variable's element type, as CTranslate2 numbers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DType {
    /// 32-bit float.
    F32,
    /// 8-bit signed integer (quantized weights, and booleans).
    I8,
    /// 16-bit signed integer.
    I16,
    /// 32-bit signed integer.
    I32,
    /// IEEE half float.
    F16,
    /// bfloat16.
    BF16,
}

impl DType {
    fn from_code(code: u8) -> Option<DType> {
        Some(match code {
            0 => DType::F32,
            1 => DType::I8,
            2 => DType::I16,
            3 => DType::I32,
            4 => DType::F16,
            5 => DType::BF16,
            _ => return None,
        })
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::I8 => 1,
            DType::I16 | DType::F16 | DType::BF16 => 2,
            DType::F32 | DType::I32 => 4,
        }
    }
}

/// One named tensor of the model.
#[derive(Clone, Debug, PartialEq)]
pub struct Variable {
    /// Dimensions, outermost first (row-major), empty for a scalar.
    pub shape: Vec<usize>,
    /// Element type.
    pub dtype: DType,
    /// Raw little-endian data, `shape.product() * dtype.size()` bytes.
    pub data: Vec<u8>,
}

impl Variable {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the variable holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements as `f32`, whatever the stored float type. Integer variables give
    /// `None`: they are quantized weights (see `weight_scale`) or flags, not values.
    pub fn to_f32(&self) -> Option<Vec<f32>> {
        let d = &self.data;
        Some(match self.dtype {
            DType::F32 => d
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            DType::F16 => d
                .chunks_exact(2)
                .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
            DType::BF16 => d
                .chunks_exact(2)
                .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
            DType::I8 | DType::I16 | DType::I32 => return None,
        })
    }

    /// A scalar integer value (`num_heads` and friends).
    pub fn scalar_int(&self) -> Option<i64> {
        if self.len() != 1 {
            return None;
        }
        let d = &self.data;
        Some(match self.dtype {
            DType::I8 => i64::from(d[0] as i8),
            DType::I16 => i64::from(i16::from_le_bytes([d[0], d[1]])),
            DType::I32 => i64::from(i32::from_le_bytes([d[0], d[1], d[2], d[3]])),
            _ => return None,
        })
    }
}

/// A parsed `model.bin`.
#[derive(Clone, Debug, Default)]
pub struct Ct2Model {
    /// The binary format version.
    pub version: u32,
    /// The model spec, `WhisperSpec` for whisper models.
    pub spec: String,
    /// The spec's revision.
    pub spec_revision: u32,
    /// Variables by name.
    pub variables: BTreeMap<String, Variable>,
    /// Alias name to the variable it stands for.
    pub aliases: BTreeMap<String, String>,
}

impl Ct2Model {
    /// A variable by name, following an alias if there is one.
    pub fn get(&self, name: &str) -> Option<&Variable> {
        self.variables.get(name).or_else(|| {
            self.aliases
                .get(name)
                .and_then(|target| self.variables.get(target))
        })
    }
}

/// Why a `model.bin` could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Ct2Error {
    /// The file ended before the structure did.
    #[error(
        "the file ends at byte {at} while reading {what}: it is truncated or not a CTranslate2 model"
    )]
    Truncated {
        /// What was being read.
        what: String,
        /// The file length.
        at: usize,
    },
    /// A binary version this reader does not know.
    #[error("binary version {0} is not supported (versions {lo} to {hi} are)", lo = SUPPORTED_VERSIONS.start(), hi = SUPPORTED_VERSIONS.end())]
    Version(u32),
    /// The structure is inconsistent.
    #[error("byte {at}: {what}")]
    Corrupt {
        /// Where.
        at: usize,
        /// What is wrong.
        what: String,
    },
}

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], Ct2Error> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| Ct2Error::Truncated {
                what: what.to_owned(),
                at: self.bytes.len(),
            })?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn u8(&mut self, what: &str) -> Result<u8, Ct2Error> {
        Ok(self.take(1, what)?[0])
    }

    fn u16(&mut self, what: &str) -> Result<u16, Ct2Error> {
        let b = self.take(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&mut self, what: &str) -> Result<u32, Ct2Error> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn string(&mut self, what: &str) -> Result<String, Ct2Error> {
        let at = self.pos;
        let len = usize::from(self.u16(what)?);
        let raw = self.take(len, what)?;
        let raw = raw.strip_suffix(&[0]).unwrap_or(raw);
        String::from_utf8(raw.to_vec()).map_err(|_| Ct2Error::Corrupt {
            at,
            what: format!("{what} is not UTF-8"),
        })
    }
}

/// Upper bound on counts read from the file, so garbage cannot ask for a huge allocation.
const MAX_ENTRIES: u32 = 1 << 20;

/// No whisper variable has more than 3 dimensions; 8 leaves room and still catches a
/// misread header early.
const MAX_RANK: u8 = 8;

/// Parses a whole `model.bin`.
pub fn parse(bytes: &[u8]) -> Result<Ct2Model, Ct2Error> {
    let mut c = Cursor { bytes, pos: 0 };
    let version = c.u32("the binary version")?;
    if !SUPPORTED_VERSIONS.contains(&version) {
        return Err(Ct2Error::Version(version));
    }
    let spec = c.string("the spec name")?;
    let spec_revision = c.u32("the spec revision")?;
    let count = c.u32("the variable count")?;
    if count > MAX_ENTRIES {
        return Err(Ct2Error::Corrupt {
            at: c.pos - 4,
            what: format!("{count} variables is not plausible"),
        });
    }
    let mut variables = BTreeMap::new();
    for i in 0..count {
        let at = c.pos;
        let name = c.string(&format!("variable {i}'s name"))?;
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(Ct2Error::Corrupt {
                at,
                what: format!("variable {i} has the name {name:?}, which is no variable name"),
            });
        }
        let rank = c.u8(&format!("{name}'s rank"))?;
        if rank > MAX_RANK {
            return Err(Ct2Error::Corrupt {
                at,
                what: format!("{name} has rank {rank}"),
            });
        }
        let mut shape = Vec::with_capacity(usize::from(rank));
        for _ in 0..rank {
            let d = c.u32(&format!("{name}'s shape"))? as usize;
            if d == 0 {
                return Err(Ct2Error::Corrupt {
                    at,
                    what: format!("{name} has an empty dimension"),
                });
            }
            shape.push(d);
        }
        let code = c.u8(&format!("{name}'s data type"))?;
        let dtype = DType::from_code(code).ok_or_else(|| Ct2Error::Corrupt {
            at,
            what: format!("{name} has unknown data type {code}"),
        })?;
        let nbytes = c.u32(&format!("{name}'s byte count"))? as usize;
        let expected = shape
            .iter()
            .try_fold(dtype.size(), |acc, &d| acc.checked_mul(d));
        if expected != Some(nbytes) {
            return Err(Ct2Error::Corrupt {
                at,
                what: format!("{name} has shape {shape:?} of {dtype:?} but {nbytes} bytes of data"),
            });
        }
        let data = c.take(nbytes, &format!("{name}'s data"))?.to_vec();
        if variables
            .insert(name.clone(), Variable { shape, dtype, data })
            .is_some()
        {
            return Err(Ct2Error::Corrupt {
                at,
                what: format!("{name} appears twice"),
            });
        }
    }
    let mut aliases = BTreeMap::new();
    let count = c.u32("the alias count")?;
    if count > MAX_ENTRIES {
        return Err(Ct2Error::Corrupt {
            at: c.pos - 4,
            what: format!("{count} aliases is not plausible"),
        });
    }
    for i in 0..count {
        let at = c.pos;
        let alias = c.string(&format!("alias {i}"))?;
        let target = c.string(&format!("alias {alias}'s target"))?;
        if !variables.contains_key(&target) {
            return Err(Ct2Error::Corrupt {
                at,
                what: format!("alias {alias} names {target:?}, which is not a variable"),
            });
        }
        aliases.insert(alias, target);
    }
    if c.pos != bytes.len() {
        return Err(Ct2Error::Corrupt {
            at: c.pos,
            what: format!("{} bytes follow the end of the model", bytes.len() - c.pos),
        });
    }
    Ok(Ct2Model {
        version,
        spec,
        spec_revision,
        variables,
        aliases,
    })
}

/// Builds `model.bin` bytes from parts; the inverse of [`parse`], for tests.
#[doc(hidden)]
pub fn emit(model: &Ct2Model) -> Vec<u8> {
    fn string(out: &mut Vec<u8>, s: &str) {
        out.extend_from_slice(&((s.len() + 1) as u16).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
        out.push(0);
    }
    let mut out = Vec::new();
    out.extend_from_slice(&model.version.to_le_bytes());
    string(&mut out, &model.spec);
    out.extend_from_slice(&model.spec_revision.to_le_bytes());
    out.extend_from_slice(&(model.variables.len() as u32).to_le_bytes());
    for (name, v) in &model.variables {
        string(&mut out, name);
        out.push(v.shape.len() as u8);
        for &d in &v.shape {
            out.extend_from_slice(&(d as u32).to_le_bytes());
        }
        out.push(match v.dtype {
            DType::F32 => 0,
            DType::I8 => 1,
            DType::I16 => 2,
            DType::I32 => 3,
            DType::F16 => 4,
            DType::BF16 => 5,
        });
        out.extend_from_slice(&(v.data.len() as u32).to_le_bytes());
        out.extend_from_slice(&v.data);
    }
    out.extend_from_slice(&(model.aliases.len() as u32).to_le_bytes());
    for (a, t) in &model.aliases {
        string(&mut out, a);
        string(&mut out, t);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Ct2Model {
        let mut m = Ct2Model {
            version: 6,
            spec: "WhisperSpec".into(),
            spec_revision: 3,
            ..Ct2Model::default()
        };
        m.variables.insert(
            "a/weight".into(),
            Variable {
                shape: vec![2, 2],
                dtype: DType::F16,
                data: [1.0f32, -2.0, 0.5, 4.0]
                    .iter()
                    .flat_map(|&x| half::f16::from_f32(x).to_le_bytes())
                    .collect(),
            },
        );
        m.variables.insert(
            "a/num_heads".into(),
            Variable {
                shape: vec![],
                dtype: DType::I16,
                data: 6i16.to_le_bytes().to_vec(),
            },
        );
        m.aliases.insert("b/weight".into(), "a/weight".into());
        m
    }

    #[test]
    fn round_trips_and_reads_values() {
        let bytes = emit(&tiny());
        let m = parse(&bytes).unwrap();
        assert_eq!(m.spec, "WhisperSpec");
        assert_eq!(
            m.get("b/weight").unwrap().to_f32().unwrap(),
            vec![1.0, -2.0, 0.5, 4.0]
        );
        assert_eq!(m.get("a/num_heads").unwrap().scalar_int(), Some(6));
        assert_eq!(emit(&m), bytes);
    }

    #[test]
    fn every_truncation_is_refused() {
        let bytes = emit(&tiny());
        for cut in 0..bytes.len() {
            assert!(parse(&bytes[..cut]).is_err(), "cut at {cut} was accepted");
        }
    }

    #[test]
    fn trailing_bytes_and_wrong_sizes_are_refused() {
        let mut bytes = emit(&tiny());
        bytes.push(0);
        assert!(matches!(parse(&bytes), Err(Ct2Error::Corrupt { .. })));
        let mut m = tiny();
        m.variables.get_mut("a/weight").unwrap().data.pop();
        assert!(matches!(parse(&emit(&m)), Err(Ct2Error::Corrupt { .. })));
        let mut bytes = emit(&tiny());
        bytes[0] = 99;
        assert_eq!(parse(&bytes).unwrap_err(), Ct2Error::Version(99));
    }
}
