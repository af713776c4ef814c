//! What can go wrong while generating the CRDs.

/// Why a CRD could not be generated. Only a bug in the generator can cause these.
#[derive(Debug, thiserror::Error)]
pub enum CrdError {
    /// The CRD derived from the types has no version or no schema.
    #[error("the CRD of {0} has no schema")]
    MissingSchema(&'static str),
    /// The schema could not be converted between its typed and JSON forms.
    #[error("the schema of {kind} does not convert: {message}")]
    Schema {
        /// The kind whose schema failed.
        kind: &'static str,
        /// The conversion error.
        message: String,
    },
    /// A CEL rule names a schema path that does not exist.
    #[error("CEL rule for {kind} at `{path}`: no such schema path")]
    RulePath {
        /// The kind the rule is for.
        kind: &'static str,
        /// The path the rule names.
        path: &'static str,
    },
}

impl CrdError {
    /// A stable CamelCase word for logs and metrics.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::MissingSchema(_) => "MissingSchema",
            Self::Schema { .. } => "SchemaConversion",
            Self::RulePath { .. } => "UnknownRulePath",
        }
    }
}
