//! The TLS files of `--tls.*`, as the pod mounts them (CONTRACT.md 2.4: PEM certificates,
//! PKCS#8 keys), read and checked before the first connection so that a wrong mount fails the
//! start, not the first scrape.

use std::path::Path;

use crate::config::TlsConfig;

/// A TLS file that is missing or not what its flag asks for; one line naming flag and file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("flag {flag}: file {path}: {message}")]
pub struct TlsFileError {
    /// The flag that named the file.
    pub flag: &'static str,
    /// The file.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// The PEM texts of a [`TlsConfig`], checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsMaterial {
    /// The trusted CA certificates, or `None` for the system's.
    pub ca_pem: Option<String>,
    /// The client certificate (chain) and its key.
    pub client: Option<(String, String)>,
    /// No check of the brokers' certificates.
    pub insecure_skip_verify: bool,
}

/// What a file must hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PemKind {
    /// At least one `CERTIFICATE` block.
    Certificates,
    /// Exactly one private key block (`PRIVATE KEY`, `RSA PRIVATE KEY` or `EC PRIVATE KEY`).
    PrivateKey,
}

/// Checks that `text`, the content of `path` named by `flag`, holds `kind`.
pub fn check_pem(
    flag: &'static str,
    path: &str,
    text: &str,
    kind: PemKind,
) -> Result<(), TlsFileError> {
    let error = |message: String| TlsFileError {
        flag,
        path: path.to_owned(),
        message,
    };
    let blocks = pem::parse_many(text).map_err(|e| error(format!("not PEM: {e}")))?;
    match kind {
        PemKind::Certificates => {
            if blocks.is_empty() || blocks.iter().any(|block| block.tag() != "CERTIFICATE") {
                return Err(error(
                    "expected one or more PEM CERTIFICATE blocks and nothing else".to_owned(),
                ));
            }
        }
        PemKind::PrivateKey => {
            let keys = blocks
                .iter()
                .filter(|block| {
                    matches!(
                        block.tag(),
                        "PRIVATE KEY" | "RSA PRIVATE KEY" | "EC PRIVATE KEY"
                    )
                })
                .count();
            if keys != 1 || blocks.len() != 1 {
                return Err(error(
                    "expected exactly one unencrypted PEM private key (PRIVATE KEY)".to_owned(),
                ));
            }
        }
    }
    Ok(())
}

fn read(flag: &'static str, path: &str, kind: PemKind) -> Result<String, TlsFileError> {
    let text = std::fs::read_to_string(Path::new(path)).map_err(|error| TlsFileError {
        flag,
        path: path.to_owned(),
        message: error.to_string(),
    })?;
    check_pem(flag, path, &text, kind)?;
    Ok(text)
}

/// Reads and checks the files of `config`.
pub fn load(config: &TlsConfig) -> Result<TlsMaterial, TlsFileError> {
    let ca_pem = config
        .ca_file
        .as_deref()
        .map(|path| read("--tls.ca-file", path, PemKind::Certificates))
        .transpose()?;
    let client = match (&config.cert_file, &config.key_file) {
        (Some(cert), Some(key)) => Some((
            read("--tls.cert-file", cert, PemKind::Certificates)?,
            read("--tls.key-file", key, PemKind::PrivateKey)?,
        )),
        _ => None,
    };
    Ok(TlsMaterial {
        ca_pem,
        client,
        insecure_skip_verify: config.insecure_skip_verify,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CERT: &str = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
    const KEY: &str = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";

    #[test]
    fn certificates_and_keys_are_told_apart() {
        let flag = "--tls.ca-file";
        assert!(check_pem(flag, "/c", CERT, PemKind::Certificates).is_ok());
        assert!(check_pem(flag, "/c", &format!("{CERT}{CERT}"), PemKind::Certificates).is_ok());
        assert!(check_pem(flag, "/k", KEY, PemKind::PrivateKey).is_ok());
        let error = check_pem("--tls.key-file", "/k", CERT, PemKind::PrivateKey).unwrap_err();
        assert_eq!(
            error.to_string(),
            "flag --tls.key-file: file /k: expected exactly one unencrypted PEM private key \
             (PRIVATE KEY)"
        );
        assert!(check_pem(flag, "/c", KEY, PemKind::Certificates).is_err());
        assert!(check_pem(flag, "/c", "", PemKind::Certificates).is_err());
        assert!(check_pem(flag, "/c", "garbage", PemKind::Certificates).is_err());
        let encrypted = KEY.replace("PRIVATE KEY", "ENCRYPTED PRIVATE KEY");
        assert!(check_pem("--tls.key-file", "/k", &encrypted, PemKind::PrivateKey).is_err());
    }

    #[test]
    fn a_missing_file_names_flag_and_file() {
        let config = TlsConfig {
            ca_file: Some("/nonexistent/cluster-ca.crt".into()),
            ..TlsConfig::default()
        };
        let error = load(&config).unwrap_err().to_string();
        assert!(
            error.starts_with("flag --tls.ca-file: file /nonexistent/cluster-ca.crt: "),
            "{error}"
        );
    }

    #[test]
    fn mounted_files_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let (ca, cert, key) = (
            dir.path().join("ca.crt"),
            dir.path().join("e.crt"),
            dir.path().join("e.key"),
        );
        std::fs::write(&ca, CERT).unwrap();
        std::fs::write(&cert, format!("{CERT}{CERT}")).unwrap();
        std::fs::write(&key, KEY).unwrap();
        let path = |p: &std::path::Path| Some(p.display().to_string());
        let material = load(&TlsConfig {
            ca_file: path(&ca),
            cert_file: path(&cert),
            key_file: path(&key),
            insecure_skip_verify: false,
        })
        .unwrap();
        assert_eq!(material.ca_pem.as_deref(), Some(CERT));
        assert_eq!(
            material.client,
            Some((format!("{CERT}{CERT}"), KEY.to_owned()))
        );
    }
}
