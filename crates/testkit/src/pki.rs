//! Certificates made by the tests: a self-signed CA and a server certificate for `localhost`
//! signed by it, as PEM text, for clusters started with TLS (`ServerOptions::tls`).

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};

use crate::TlsFiles;

/// A CA and a `localhost` server certificate it signed.
pub struct TestPki {
    pub ca_pem: String,
    pub cert_pem: String,
    pub key_pem: String,
}

impl TestPki {
    /// A new CA named `ca_name` and a server certificate for `localhost`.
    ///
    /// # Panics
    /// If key generation fails (it does not, short of a broken crypto provider).
    pub fn new(ca_name: &str) -> TestPki {
        let ca = ca(ca_name);
        let key = KeyPair::generate().expect("server key");
        let mut params =
            CertificateParams::new(vec!["localhost".to_string()]).expect("server params");
        params
            .distinguished_name
            .push(DnType::CommonName, "localhost");
        let cert = params
            .signed_by(&key, &ca)
            .expect("signed server certificate");
        TestPki {
            ca_pem: ca.pem(),
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        }
    }

    /// The server's side: its certificate and key (no client-certificate CA).
    pub fn server_files(&self) -> TlsFiles {
        TlsFiles {
            cert_pem: self.cert_pem.clone().into_bytes(),
            key_pem: self.key_pem.clone().into_bytes(),
            ca_pem: None,
        }
    }
}

/// PEM of a self-signed CA that signed nothing the tests' servers use (a wrong root).
pub fn unrelated_ca_pem(name: &str) -> String {
    ca(name).pem()
}

fn ca(name: &str) -> CertifiedIssuer<'static, KeyPair> {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    CertifiedIssuer::self_signed(params, KeyPair::generate().expect("CA key")).expect("CA")
}
