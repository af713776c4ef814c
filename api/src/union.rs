//! Support for `type`-discriminated unions.
//!
//! Strimzi models many choices (listener authentication, storage, logging, ...) as an object
//! whose `type` field selects which other fields apply. In Rust these are enums, declared with
//! [`tagged_union!`](crate::tagged_union). Their schema is one structural object holding the
//! properties of every variant plus a `type` enum, which is what Kubernetes accepts for a CRD
//! and what Strimzi's CRDs contain.

use schemars::{Schema, SchemaGenerator};
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

/// A function that produces the inline schema of one union variant.
pub type VariantSchema = fn(&mut SchemaGenerator) -> Schema;

/// Declares an enum whose variants are chosen by the `type` field of a JSON object.
///
/// Each variant wraps a struct with the fields that belong to that `type`. The generated enum
/// serializes to the struct's fields plus `"type": "<tag>"`, deserializes with errors that name
/// the failing field inside the variant, and has a structural JSON schema (see [`merged_schema`]).
///
/// ```
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// /// Reads credentials from a file.
/// #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
/// pub struct FromFile {
///     /// Path of the file.
///     pub path: String,
/// }
///
/// /// Uses no credentials.
/// #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
/// pub struct Anonymous {}
///
/// strimzi_api::tagged_union! {
///     /// Where credentials come from.
///     pub enum Credentials {
///         /// From a file.
///         File("file") => FromFile,
///         /// None at all.
///         Anonymous("anonymous") => Anonymous,
///     }
/// }
///
/// let parsed: Credentials = serde_json::from_str(r#"{"type":"file","path":"/x"}"#).unwrap();
/// assert_eq!(parsed, Credentials::File(FromFile { path: "/x".into() }));
/// assert_eq!(parsed.type_name(), "file");
/// ```
#[macro_export]
macro_rules! tagged_union {
    (
        $(#[doc = $doc:expr])*
        $vis:vis enum $name:ident {
            $(
                $(#[doc = $vdoc:expr])*
                $variant:ident($tag:literal) => $ty:ty
            ),+ $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Clone, Debug, PartialEq, ::serde::Serialize)]
        #[serde(tag = "type")]
        $vis enum $name {
            $(
                $(#[doc = $vdoc])*
                #[serde(rename = $tag)]
                $variant($ty),
            )+
        }

        impl $name {
            /// Every value of `type` this union accepts, in declaration order.
            pub const TYPES: &'static [&'static str] = &[$($tag),+];

            /// The value of the `type` field for this variant.
            pub fn type_name(&self) -> &'static str {
                match self {
                    $(Self::$variant(_) => $tag,)+
                }
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
                $crate::union::deserialize_tagged(deserializer, Self::TYPES, |tag, value| match tag {
                    $($tag => $crate::union::deserialize_nested(value).map(Self::$variant),)+
                    other => ::std::result::Result::Err(::std::format!("unknown type `{other}`")),
                })
            }
        }

        impl ::schemars::JsonSchema for $name {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(stringify!($name))
            }

            fn json_schema(generator: &mut ::schemars::SchemaGenerator) -> ::schemars::Schema {
                $crate::union::merged_schema(
                    generator,
                    &[$($doc),*],
                    &[$(($tag, <$ty as ::schemars::JsonSchema>::json_schema as $crate::union::VariantSchema)),+],
                )
            }
        }
    };
}

/// Deserializes a tagged object: reads `type`, checks it against `types`, then lets `build`
/// turn the whole object into the variant.
pub fn deserialize_tagged<'de, D, T>(
    deserializer: D,
    types: &'static [&'static str],
    build: impl FnOnce(&str, Value) -> Result<T, String>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    let value = Value::deserialize(deserializer)?;
    let tag = match &value {
        Value::Object(map) => match map.get("type") {
            Some(Value::String(tag)) => tag.clone(),
            Some(_) => return Err(D::Error::custom("field `type` must be a string")),
            None => return Err(D::Error::missing_field("type")),
        },
        _ => {
            return Err(D::Error::custom("expected an object with a `type` field"));
        }
    };
    if !types.contains(&tag.as_str()) {
        return Err(D::Error::unknown_variant(&tag, types));
    }
    build(&tag, value).map_err(D::Error::custom)
}

/// Deserializes a value that is part of a larger document (a union variant, or one part of a
/// struct read in pieces), naming the failing field on error.
///
/// The message starts with ``at `<path>`: `` when a field inside the value failed;
/// [`crate::document::from_value`] moves that path into the error's field path.
pub fn deserialize_nested<T: DeserializeOwned>(value: Value) -> Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(|error| {
        let path = error.path().to_string();
        if path == "." {
            error.inner().to_string()
        } else {
            format!("{NESTED_PATH_PREFIX}{path}`: {}", error.inner())
        }
    })
}

/// How a union's error message begins when it names a field inside the variant.
pub(crate) const NESTED_PATH_PREFIX: &str = "at `";

/// Builds the schema of a union: an object with a required `type` enum and the union of every
/// variant's properties (the first variant declaring a property gives its schema). Besides
/// `type`, a field is required when every variant requires it.
pub fn merged_schema(
    generator: &mut SchemaGenerator,
    doc_lines: &[&str],
    variants: &[(&str, VariantSchema)],
) -> Schema {
    let mut properties = Map::new();
    let mut required_by_all: Option<Vec<Value>> = None;
    for (_, variant_schema) in variants {
        let schema = variant_schema(generator);
        if let Some(Value::Object(variant_properties)) = schema.get("properties") {
            for (name, property) in variant_properties {
                if name != "type" && !properties.contains_key(name) {
                    properties.insert(name.clone(), property.clone());
                }
            }
        }
        let required = schema
            .get("required")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        required_by_all = Some(match required_by_all {
            None => required,
            Some(so_far) => so_far
                .into_iter()
                .filter(|name| required.contains(name))
                .collect(),
        });
    }
    let mut required = vec![Value::String("type".to_owned())];
    required.extend(required_by_all.unwrap_or_default());
    let tags: Vec<Value> = variants
        .iter()
        .map(|(tag, _)| Value::String((*tag).to_owned()))
        .collect();
    properties.insert(
        "type".to_owned(),
        serde_json::json!({
            "type": "string",
            "enum": tags,
            "description": "Selects which of the other fields apply.",
        }),
    );
    let mut schema = serde_json::json!({
        "type": "object",
        "properties": properties,
        "required": required,
    });
    let description = crate::schema::doc_to_description(doc_lines);
    if let (Some(object), false) = (schema.as_object_mut(), description.is_empty()) {
        object.insert("description".to_owned(), Value::String(description));
    }
    Schema::try_from(schema).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    /// Reads from a file.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
    struct FromFile {
        /// Where.
        path: String,
        /// How big at most.
        limit: Option<u32>,
    }

    /// Reads from a URL.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
    struct FromUrl {
        /// Where.
        path: String,
        /// Which proxy.
        proxy: String,
    }

    crate::tagged_union! {
        /// Where data comes from.
        enum Source {
            /// A file.
            File("file") => FromFile,
            /// A URL.
            Url("url") => FromUrl,
        }
    }

    #[test]
    fn schema_merges_properties_and_requires_what_every_variant_requires() {
        let schema = serde_json::to_value(schemars::schema_for!(Source)).unwrap();
        assert_eq!(schema["required"], json!(["type", "path"]));
        assert_eq!(schema["properties"]["type"]["enum"], json!(["file", "url"]));
        for property in ["path", "limit", "proxy"] {
            assert!(
                schema["properties"][property].is_object(),
                "{property} in {schema}"
            );
        }
        assert_eq!(schema["description"], "Where data comes from.");
    }

    #[test]
    fn variants_read_and_write_with_their_tag() {
        let url = json!({"type": "url", "path": "/x", "proxy": "p"});
        let source: Source = serde_json::from_value(url.clone()).unwrap();
        assert_eq!(source.type_name(), "url");
        assert_eq!(serde_json::to_value(&source).unwrap(), url);
        let error = serde_json::from_value::<Source>(json!({"type": "ftp"})).unwrap_err();
        assert!(
            error.to_string().contains("unknown variant `ftp`"),
            "{error}"
        );
        let error = serde_json::from_value::<Source>(json!({"path": "/x"})).unwrap_err();
        assert!(
            error.to_string().contains("missing field `type`"),
            "{error}"
        );
    }
}
