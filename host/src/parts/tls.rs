//! TLS for a host dialling a remote relay (`wss://` for its link, `https://` for artifact
//! uploads and MCP's calls): rustls with the ring provider, trusting the web's roots
//! (webpki-roots) and any CA the user names, for a relay behind a certificate of a private CA.
//! ring is the one provider in the build (reqwest's `rustls-no-provider`: no aws-lc, whose C
//! needs more of a cross compiler than ring's), and the process default once a config is made.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;

pub fn client_config(extra_ca: Option<&Path>) -> Result<Arc<rustls::ClientConfig>> {
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    if let Some(path) = extra_ca {
        let certs = CertificateDer::pem_file_iter(path)
            .with_context(|| format!("cannot read CA certificates from {}", path.display()))?;
        for cert in certs {
            let cert = cert.with_context(|| format!("{} holds a bad PEM certificate", path.display()))?;
            roots
                .add(cert)
                .with_context(|| format!("{} holds a certificate rustls refuses", path.display()))?;
        }
    }
    // Anything else in this process that asks rustls for its default gets ring too.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("rustls refused its own default protocol versions")?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// An HTTP client on that TLS configuration (the defaults, with a warning, if reqwest refuses it).
pub fn http_client(tls: &Arc<rustls::ClientConfig>) -> reqwest::Client {
    reqwest::Client::builder()
        .use_preconfigured_tls((**tls).clone())
        .build()
        .unwrap_or_else(|e| {
            tracing::warn!("cannot build an HTTP client with the TLS settings ({e}); using the defaults");
            reqwest::Client::new()
        })
}
