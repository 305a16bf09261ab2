//! TLS client configuration with libpq's `sslmode` semantics (rustls, ring provider):
//! `require`/`prefer`/`allow` encrypt without verifying unless a root certificate file exists
//! (then the chain is checked, like `verify-ca`); `verify-ca` checks the chain against
//! `sslrootcert`; `verify-full` also checks the host name. Client certificates are used when
//! both `sslcert` and `sslkey` files exist.

use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};

use crate::config::{Config, SslMode};
use crate::error::Error;

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Builds the rustls client configuration for `cfg` (files are read here, once per attempt).
pub(crate) fn client_config(cfg: &Config) -> Result<Arc<ClientConfig>, Error> {
    let provider = provider();
    let root_file = cfg.sslrootcert.as_deref().filter(|p| p.exists());
    let verifier: Arc<dyn ServerCertVerifier> = match (cfg.sslmode, root_file) {
        (SslMode::VerifyCa | SslMode::VerifyFull, None) => {
            let path = cfg
                .sslrootcert
                .as_deref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "~/.postgresql/root.crt".into());
            return Err(Error::config(format!(
                "root certificate file \"{path}\" does not exist\n\
                 Either provide the file or change sslmode to disable server certificate verification."
            )));
        }
        (mode, Some(path)) => {
            let roots = load_roots(path)?;
            let inner =
                WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                    .build()
                    .map_err(|e| Error::config(format!("could not use root certificates: {e}")))?;
            if mode == SslMode::VerifyFull {
                inner
            } else {
                Arc::new(ChainOnly { inner })
            }
        }
        (_, None) => Arc::new(NoVerification {
            provider: provider.clone(),
        }),
    };
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::config(format!("TLS setup failed: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let cert = cfg.sslcert.as_deref().filter(|p| p.exists());
    let key = cfg.sslkey.as_deref().filter(|p| p.exists());
    let mut config = match (cert, key) {
        (Some(cert), Some(key)) => {
            let chain = load_certs(cert)?;
            let key = PrivateKeyDer::from_pem_file(key).map_err(|e| {
                Error::config(format!(
                    "could not load private key file \"{}\": {e}",
                    key.display()
                ))
            })?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| Error::config(format!("could not use client certificate: {e}")))?
        }
        _ => builder.with_no_client_auth(),
    };
    config.enable_sni = cfg.sslsni;
    Ok(Arc::new(config))
}

/// The name the certificate is checked against (and sent as SNI).
pub(crate) fn server_name(host: &str) -> Result<ServerName<'static>, Error> {
    ServerName::try_from(host.to_string())
        .map_err(|_| Error::config(format!("invalid host name for TLS: \"{host}\"")))
}

fn load_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, Error> {
    let certs: Result<Vec<_>, _> = CertificateDer::pem_file_iter(path)
        .map_err(|e| {
            Error::config(format!(
                "could not read certificate file \"{}\": {e}",
                path.display()
            ))
        })?
        .collect();
    let certs = certs.map_err(|e| {
        Error::config(format!(
            "could not read certificate file \"{}\": {e}",
            path.display()
        ))
    })?;
    if certs.is_empty() {
        return Err(Error::config(format!(
            "no certificates found in \"{}\"",
            path.display()
        )));
    }
    Ok(certs)
}

fn load_roots(path: &Path) -> Result<RootCertStore, Error> {
    let mut roots = RootCertStore::empty();
    for cert in load_certs(path)? {
        roots.add(cert).map_err(|e| {
            Error::config(format!(
                "could not read root certificate file \"{}\": {e}",
                path.display()
            ))
        })?;
    }
    Ok(roots)
}

/// Explains a TLS failure the way libpq does where it can.
pub(crate) fn describe_tls_error(e: &std::io::Error, host: &str) -> String {
    let inner = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>());
    match inner {
        Some(rustls::Error::InvalidCertificate(CertificateError::NotValidForNameContext {
            presented,
            ..
        })) if !presented.is_empty() => {
            let first = presented_name(&presented[0]);
            match presented.len() {
                1 => format!("server certificate for \"{first}\" does not match host name \"{host}\""),
                n => format!(
                    "server certificate for \"{first}\" (and {} other name{}) does not match host name \"{host}\"",
                    n - 1,
                    if n == 2 { "" } else { "s" }
                ),
            }
        }
        Some(rustls::Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        )) => format!("server certificate does not match host name \"{host}\""),
        Some(rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer)) => {
            "SSL error: certificate verify failed".to_string()
        }
        Some(rustls::Error::InvalidCertificate(c)) => {
            format!("SSL error: certificate verify failed: {c:?}")
        }
        Some(other) => format!("SSL error: {other}"),
        None => format!("SSL error: {}", crate::error::strerror(e)),
    }
}

/// webpki reports names as `DnsName("x")` / `IpAddress(..)`; libpq shows the bare name.
fn presented_name(s: &str) -> &str {
    match (s.find("(\""), s.rfind("\")")) {
        (Some(a), Some(b)) if a + 2 <= b => &s[a + 2..b],
        _ => s,
    }
}

/// `verify-ca`: the chain must verify, the name is not checked.
#[derive(Debug)]
struct ChainOnly {
    inner: Arc<WebPkiServerVerifier>,
}

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// `require` without a root certificate: encrypt, trust any certificate (handshake signatures
/// are still checked so the session keys belong to the presented certificate).
#[derive(Debug)]
struct NoVerification {
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
