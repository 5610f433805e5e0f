//! The shape every model shares: a plain configuration (`Default`, public fields, `validate()`),
//! a device choice ([`crate::device::Target`]), the verbs (`fit`, then `predict`, `transform`,
//! `search` or `retrieve`), and saving through the one saved-model format
//! ([`crate::io::model_file`]). Fitted state is kept apart from the configuration, as in
//! scikit-learn: a model that is not fitted refuses to predict or to be saved.
//!
//! | model | type | verbs |
//! |---|---|---|
//! | GBNN | [`crate::gbnn::model::Gbnn`] | `fit`, `partial_fit`, `retrieve` |
//! | FlyHash | [`crate::flyhash::model::FlyHash`] | `fit`, `transform` |
//! | FlyHash index | [`crate::flyhash::index::FlyIndex`] | `build`, `add`, `search`, `append` |
//! | FlyHash approximate index | [`crate::flyhash::ann::FlyAnnIndex`] | `train`, `add`, `search` (`probes`) |
//! | FlyNN | [`crate::flyhash::classifier::FlyNN`] | `fit`, `partial_fit`, `predict`, `predict_proba`, `score` |
//! | OCNN | [`crate::ocnn::model::Ocnn`] | `fit` (`labels`) |
//! | cortical | [`crate::cortical::model::Cortical`] | `fit`, `predict`, `transform`, `score` |

use std::path::Path;

use crate::error::Result;
use crate::io::model_file;

/// Saving and loading, the same for every model: `to_bytes`/`from_bytes` give the whole file
/// (what Python's pickling uses), `save`/`load` write and read it atomically.
pub trait Model: Sized {
    /// The kind written in the file's header.
    const KIND: &'static str;

    /// The configuration and fitted sizes, as written in the header, and the payload.
    fn parts(&self) -> Result<(serde_json::Value, Vec<u8>)>;

    /// Rebuilds the model from a checked file's parts (`name` names the file in errors).
    fn from_parts(saved: &model_file::Saved, name: &str) -> Result<Self>;

    /// The whole saved-model file as bytes.
    fn to_bytes(&self) -> Result<Vec<u8>> {
        let (config, payload) = self.parts()?;
        model_file::encode(Self::KIND, &config, &payload)
    }

    /// A model from the bytes of [`Model::to_bytes`] (`name` names them in errors).
    fn from_bytes(b: &[u8], name: &str) -> Result<Self> {
        let saved = model_file::decode(b, name, Self::KIND)?;
        if saved.end != b.len() {
            let extra = b.len() - saved.end;
            return Err(crate::Error::input(
                name,
                format!("{extra} bytes after the end of the model (a corrupted file?)"),
            ));
        }
        Self::from_parts(&saved, name)
    }

    /// Saves to `path` atomically: a failed save leaves any previous file as it was.
    fn save(&self, path: &Path) -> Result<()> {
        let (config, payload) = self.parts()?;
        model_file::write(path, Self::KIND, &config, &payload)
    }

    /// Loads a model saved by [`Model::save`].
    fn load(path: &Path) -> Result<Self> {
        Self::from_bytes(&model_file::read_bytes(path)?, &path.display().to_string())
    }
}

/// Checks that a batch of `rows × cols` values is one the fitted model takes.
pub(crate) fn check_features(what: &str, rows: usize, cols: usize, fitted: usize) -> Result<()> {
    if cols != fitted {
        return Err(crate::Error::input(what, format!("{cols} features per row, the model was fitted on {fitted}")));
    }
    if rows == 0 {
        return Err(crate::Error::input(what, "no rows"));
    }
    Ok(())
}
