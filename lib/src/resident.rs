//! What a model keeps on the device it last ran on, between calls.

use crate::device::Device;

/// Something a model made on an opened [`Device`](crate::device::Device) and keeps for later calls (a network's W or
/// an index's codes uploaded to its GPU): made again when asked for on another device, dropped
/// by the model whenever what it was made from changes (fit, add …). A clone of the model
/// starts without (what it keeps is per model).
pub(crate) struct Kept<T>(std::sync::Mutex<Option<(std::sync::Arc<Device>, std::sync::Arc<T>)>>);

impl<T> Kept<T> {
    /// What is kept for `device`, or what `make` makes now (then kept). The old one is freed
    /// first: on a GPU, two copies of a large W or index may not fit.
    pub(crate) fn get<E>(
        &self,
        device: &std::sync::Arc<Device>,
        make: impl FnOnce() -> std::result::Result<T, E>,
    ) -> std::result::Result<std::sync::Arc<T>, E> {
        let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((d, t)) = slot.as_ref() {
            if std::sync::Arc::ptr_eq(d, device) {
                return Ok(t.clone());
            }
        }
        *slot = None;
        let t = std::sync::Arc::new(make()?);
        *slot = Some((device.clone(), t.clone()));
        Ok(t)
    }
}

impl<T> Default for Kept<T> {
    fn default() -> Self {
        Kept(std::sync::Mutex::new(None))
    }
}

impl<T> Clone for Kept<T> {
    fn clone(&self) -> Self {
        Kept::default()
    }
}

impl<T> std::fmt::Debug for Kept<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Kept")
    }
}
