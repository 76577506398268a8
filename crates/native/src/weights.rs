//! Reading the trainer's safetensors weights by name, checking every shape.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use safetensors::{Dtype, SafeTensors};

use crate::error::NativeError;

/// The tensors of one weights file, taken out by name; [`Tensors::finish`] then refuses
/// a file with tensors the architecture does not have (another architecture's file).
#[derive(Debug)]
pub(crate) struct Tensors {
    path: PathBuf,
    tensors: HashMap<String, (Vec<usize>, Vec<f32>)>,
    taken: BTreeSet<String>,
}

impl Tensors {
    /// Reads every tensor of the safetensors file at `path`; all must be f32.
    pub(crate) fn read(path: &Path) -> Result<Tensors, NativeError> {
        let bytes = std::fs::read(path).map_err(|source| NativeError::Io {
            path: path.into(),
            source,
        })?;
        let file = SafeTensors::deserialize(&bytes).map_err(|e| NativeError::Format {
            path: path.into(),
            what: format!("{e:?}"),
        })?;
        let mut tensors = HashMap::new();
        for (name, view) in file.tensors() {
            if view.dtype() != Dtype::F32 {
                return Err(NativeError::Weights {
                    path: path.into(),
                    what: format!(
                        "tensor {name} is {:?}; the native backend reads f32 weights",
                        view.dtype()
                    ),
                });
            }
            let data = view
                .data()
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            tensors.insert(name, (view.shape().to_vec(), data));
        }
        Ok(Tensors {
            path: path.into(),
            tensors,
            taken: BTreeSet::new(),
        })
    }

    /// The tensor `name`, which must have exactly `shape`.
    pub(crate) fn take(&mut self, name: &str, shape: &[usize]) -> Result<Vec<f32>, NativeError> {
        let (found, data) = self
            .tensors
            .remove(name)
            .ok_or_else(|| self.bad(format!("tensor {name} is missing")))?;
        if found != shape {
            return Err(self.bad(format!(
                "tensor {name} has shape {found:?}, the network expects {shape:?}"
            )));
        }
        self.taken.insert(name.to_owned());
        Ok(data)
    }

    /// Refuses tensors that no layer took.
    pub(crate) fn finish(self) -> Result<(), NativeError> {
        let mut extra: Vec<&String> = self.tensors.keys().collect();
        extra.sort();
        match extra.first() {
            Some(name) => {
                Err(self.bad(format!("unexpected tensor {name} (another architecture?)")))
            }
            None => Ok(()),
        }
    }

    fn bad(&self, what: String) -> NativeError {
        NativeError::Weights {
            path: self.path.clone(),
            what,
        }
    }
}
