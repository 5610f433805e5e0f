//! GPU backend of neurobits (filled by the GPU issue).
