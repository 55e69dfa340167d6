//! TLS for the PostgreSQL client with rustls: the client configuration for each `sslmode`
//! (require: encrypted, certificate unchecked as in libpq; verify-ca: a chain to a trusted
//! root; verify-full: that and the host name) and the trusted roots (`sslrootcert`, else
//! ~/.postgresql/root.crt, else the system's).

use super::config::{PgConfig, SslMode};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, Error, RootCertStore, SignatureScheme};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How far the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Not at all (only the handshake's signatures): encryption without authentication.
    Nothing,
    /// A chain to a trusted root, any name.
    Chain,
    /// A chain to a trusted root, naming the host.
    ChainAndName,
}

fn check_for(cfg: &PgConfig) -> Check {
    match cfg.sslmode {
        SslMode::VerifyFull => Check::ChainAndName,
        SslMode::VerifyCa => Check::Chain,
        // libpq: with a root certificate given, require checks the chain as verify-ca does.
        SslMode::Require if cfg.sslrootcert.as_deref().is_some_and(|p| p != Path::new("system")) => {
            Check::Chain
        }
        _ => Check::Nothing,
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The roots to trust: the `sslrootcert` file (PEM), or "system" for the system's, or when not
/// given ~/.postgresql/root.crt if it exists, else the system's.
fn roots(cfg: &PgConfig) -> Result<RootCertStore, String> {
    let home_file = || std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".postgresql/root.crt"));
    let file = match cfg.sslrootcert.as_deref() {
        Some(p) if p == Path::new("system") => None,
        Some(p) => Some(p.to_path_buf()),
        None => home_file().filter(|p| p.exists()),
    };
    let mut store = RootCertStore::empty();
    match file {
        Some(path) => {
            let certs: Vec<CertificateDer> = CertificateDer::pem_file_iter(&path)
                .and_then(|it| it.collect::<Result<_, _>>())
                .map_err(|e| format!("cannot read the root certificates in {}: {e}", path.display()))?;
            let (added, _) = store.add_parsable_certificates(certs);
            if added == 0 {
                return Err(format!("{} holds no usable root certificate", path.display()));
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            store.add_parsable_certificates(found.certs);
            if store.is_empty() {
                return Err("no system root certificates found; give sslrootcert=FILE".into());
            }
        }
    }
    Ok(store)
}

/// The rustls client configuration for `cfg`'s sslmode (which must ask for TLS).
pub fn client_config(cfg: &PgConfig) -> Result<Arc<ClientConfig>, String> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup: {e}"))?;
    let check = check_for(cfg);
    let config = if check == Check::Nothing {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Unchecked(provider)))
            .with_no_client_auth()
    } else {
        let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots(cfg)?), provider)
            .build()
            .map_err(|e| format!("TLS setup: {e}"))?;
        let verifier: Arc<dyn ServerCertVerifier> =
            if check == Check::Chain { Arc::new(AnyName(webpki)) } else { webpki };
        builder.dangerous().with_custom_certificate_verifier(verifier).with_no_client_auth()
    };
    Ok(Arc::new(config))
}

/// The name the certificate is checked against (verify-full) and sent as SNI when it is a
/// DNS name. Without a name check, a host rustls cannot name is sent as "localhost".
pub fn server_name(cfg: &PgConfig) -> Result<ServerName<'static>, String> {
    match ServerName::try_from(cfg.host.clone()) {
        Ok(name) => Ok(name),
        Err(_) if check_for(cfg) != Check::ChainAndName => Ok(ServerName::from(
            rustls::pki_types::DnsName::try_from("localhost").map_err(|e| e.to_string())?,
        )),
        Err(e) => Err(format!("'{}' cannot be checked against a certificate: {e}", cfg.host)),
    }
}

/// sslmode=require: any certificate; the handshake's signatures are still checked, so the
/// session key belongs to whoever holds the certificate's key.
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// verify-ca: the webpki checks, except that the certificate need not name the host.
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        // webpki checks the name last, after the chain: a name error means the chain is good.
        match self.0.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(Error::InvalidCertificate(
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
    ) -> Result<HandshakeSignatureValid, Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}
