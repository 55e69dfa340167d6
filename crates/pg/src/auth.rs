//! Client side of PostgreSQL's password methods: `md5` (the salted double MD5) and
//! SCRAM-SHA-256 (RFC 5802 / RFC 7677, without channel binding), on the authentication module
//! of the `postgres-protocol` crate, which the central store's client links already: one set
//! of digests in the build. Its SCRAM passwords go through SASLprep (RFC 4013) as PostgreSQL's
//! own client does, falling back to the raw password when SASLprep refuses it.

use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, ScramSha256};

/// The `md5` method's answer: "md5" + md5hex(md5hex(password + user) + salt).
pub fn md5_password(user: &str, password: &str, salt: [u8; 4]) -> String {
    md5_hash(user.as_bytes(), password.as_bytes(), salt)
}

/// A SCRAM-SHA-256 exchange in progress (client side), with a random nonce of its own.
pub struct Scram {
    inner: ScramSha256,
}

impl Scram {
    /// Starts an exchange. The GS2 header is "n,,": this client does no channel binding (so
    /// a server that offers SCRAM-SHA-256-PLUS does not take it for a downgrade).
    pub fn new(password: &str) -> Self {
        Scram { inner: ScramSha256::new(password.as_bytes(), ChannelBinding::unsupported()) }
    }

    /// The client-first message.
    pub fn client_first(&self) -> Vec<u8> {
        self.inner.message().to_vec()
    }

    /// Answers the server-first message with the client-final message (carrying the proof);
    /// the error says what is wrong with the server's message.
    pub fn client_final(&mut self, server_first: &[u8]) -> Result<Vec<u8>, String> {
        self.inner.update(server_first).map_err(|e| format!("SCRAM server-first message refused: {e}"))?;
        Ok(self.inner.message().to_vec())
    }

    /// Checks the server-final message: the server proves it knows the password too.
    pub fn verify_server(&mut self, server_final: &[u8]) -> Result<(), String> {
        if let Some(e) = server_final.strip_prefix(b"e=") {
            return Err(format!("SCRAM failed on the server: {}", String::from_utf8_lossy(e)));
        }
        self.inner.finish(server_final).map_err(|e| {
            format!("SCRAM server signature refused, the server does not know the password: {e}")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md5_password_matches_postgres_formula() {
        // md5 + md5hex(md5hex("secretalice") + salt), computed with another MD5 implementation.
        assert_eq!(md5_password("alice", "secret", [1, 2, 3, 4]), "md598a0412b9c31436fc53776e863350083");
    }

    #[test]
    fn scram_starts_without_channel_binding_and_refuses_a_foreign_nonce() {
        let mut s = Scram::new("pw");
        let first = String::from_utf8(s.client_first()).unwrap();
        let nonce = first.strip_prefix("n,,n=,r=").unwrap_or_else(|| panic!("{first}"));
        assert!(nonce.len() >= 18 && !nonce.contains(','), "{first}");
        assert_ne!(Scram::new("pw").client_first(), s.client_first(), "each exchange has its own nonce");
        let err = s.client_final(b"r=xyz123,s=AAAA,i=4096").unwrap_err();
        assert!(err.starts_with("SCRAM server-first message refused"), "{err}");
    }

    #[test]
    fn scram_answers_a_server_and_checks_its_signature() {
        let mut s = Scram::new("pencil");
        let first = String::from_utf8(s.client_first()).unwrap();
        let nonce = first.strip_prefix("n,,n=,r=").unwrap().to_string();
        let server_first = format!("r={nonce}srv,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096");
        let fin = String::from_utf8(s.client_final(server_first.as_bytes()).unwrap()).unwrap();
        assert!(fin.starts_with(&format!("c=biws,r={nonce}srv,p=")), "{fin}");
        let err = s.verify_server(b"v=AAAA").unwrap_err();
        assert!(err.contains("does not know the password"), "{err}");
        let mut s = Scram::new("pencil");
        assert!(s.verify_server(b"e=invalid-proof").unwrap_err().contains("invalid-proof"));
    }
}
