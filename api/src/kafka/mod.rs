//! Filled in by the helper that owns this module.
