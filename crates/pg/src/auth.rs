//! Client side of PostgreSQL's password methods: `md5` (the salted double MD5) and
//! SCRAM-SHA-256 (RFC 5802 / RFC 7677, without channel binding). The digests, HMAC, PBKDF2 and
//! base64 are RustCrypto's and the base64 crate's; the exchange itself is a few lines here.
//! SCRAM passwords go through SASLprep (RFC 4013) as PostgreSQL's own client does, falling back
//! to the raw password when it has characters SASLprep prohibits.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use md5::{Digest, Md5};
use sha2::Sha256;

/// Lower-case hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn md5_hex(data: &[u8]) -> String {
    hex(&Md5::digest(data))
}

fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

/// HMAC-SHA-256 of `msg` under `key`.
fn hmac_sha256(key: &[u8], msg: &[u8]) -> [u8; 32] {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(msg);
    mac.finalize().into_bytes().into()
}

/// SCRAM's `Hi(password, salt, i)`: PBKDF2-HMAC-SHA-256 with one 32-byte block.
fn hi(password: &[u8], salt: &[u8], iterations: u32) -> [u8; 32] {
    pbkdf2::pbkdf2_hmac_array::<Sha256, 32>(password, salt, iterations)
}

/// The password as SCRAM hashes it: SASLprep'd, or as given when SASLprep refuses it (as
/// PostgreSQL does on both sides).
fn prepared(password: &str) -> String {
    stringprep::saslprep(password).map(|p| p.into_owned()).unwrap_or_else(|_| password.to_string())
}

/// Standard base64 with padding.
pub fn b64_encode(data: &[u8]) -> String {
    STANDARD.encode(data)
}

/// Decodes standard base64 (with its padding); None when it is not base64.
pub fn b64_decode(text: &str) -> Option<Vec<u8>> {
    STANDARD.decode(text).ok()
}

/// The `md5` method's answer: "md5" + md5hex(md5hex(password + user) + salt).
pub fn md5_password(user: &str, password: &str, salt: [u8; 4]) -> String {
    let mut outer = md5_hex(format!("{password}{user}").as_bytes()).into_bytes();
    outer.extend_from_slice(&salt);
    format!("md5{}", md5_hex(&outer))
}

/// A SCRAM-SHA-256 exchange in progress (client side).
pub struct Scram {
    password: String,
    client_first_bare: String,
    nonce: String,
    /// Set once the server's first message is answered: the signature the server must send.
    server_signature: Option<[u8; 32]>,
}

impl Scram {
    /// Starts an exchange with the client nonce `nonce` (printable, no commas).
    pub fn new(password: &str, nonce: &str) -> Self {
        // PostgreSQL takes the user from the startup message; the SCRAM user name is ignored.
        Scram {
            password: prepared(password),
            client_first_bare: format!("n=,r={nonce}"),
            nonce: nonce.to_string(),
            server_signature: None,
        }
    }

    /// A nonce of 18 random bytes from the kernel, base64 (24 characters).
    pub fn random_nonce() -> std::io::Result<String> {
        let mut buf = [0u8; 18];
        std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut buf)?;
        Ok(b64_encode(&buf))
    }

    /// The client-first message (GS2 header "n,," : no channel binding).
    pub fn client_first(&self) -> String {
        format!("n,,{}", self.client_first_bare)
    }

    /// Answers the server-first message with the client-final message (carrying the proof).
    pub fn client_final(&mut self, server_first: &str) -> Result<String, String> {
        let field = |key: &str| {
            server_first
                .split(',')
                .find_map(|p| p.strip_prefix(key))
                .ok_or_else(|| format!("SCRAM server-first message has no '{key}': {server_first}"))
        };
        let nonce = field("r=")?;
        if !nonce.starts_with(&self.nonce) || nonce.len() <= self.nonce.len() {
            return Err("SCRAM server nonce does not extend the client's (not a genuine server?)".into());
        }
        let salt = b64_decode(field("s=")?).ok_or("SCRAM salt is not base64")?;
        let iterations: u32 = field("i=")?.parse().map_err(|_| "SCRAM iteration count is not a number")?;
        if iterations == 0 {
            return Err("SCRAM iteration count is 0".into());
        }
        let without_proof = format!("c=biws,r={nonce}");
        let auth_message = format!("{},{server_first},{without_proof}", self.client_first_bare);
        let salted = hi(self.password.as_bytes(), &salt, iterations);
        let client_key = hmac_sha256(&salted, b"Client Key");
        let stored_key = sha256(&client_key);
        let signature = hmac_sha256(&stored_key, auth_message.as_bytes());
        let proof: Vec<u8> = client_key.iter().zip(signature).map(|(a, b)| a ^ b).collect();
        let server_key = hmac_sha256(&salted, b"Server Key");
        self.server_signature = Some(hmac_sha256(&server_key, auth_message.as_bytes()));
        Ok(format!("{without_proof},p={}", b64_encode(&proof)))
    }

    /// Checks the server-final message: the server proves it knows the password too.
    pub fn verify_server(&self, server_final: &str) -> Result<(), String> {
        if let Some(e) = server_final.strip_prefix("e=") {
            return Err(format!("SCRAM failed on the server: {e}"));
        }
        let v = server_final
            .split(',')
            .find_map(|p| p.strip_prefix("v="))
            .ok_or_else(|| format!("SCRAM server-final message has no signature: {server_final}"))?;
        let expected = self.server_signature.ok_or("SCRAM server-final came before server-first")?;
        match b64_decode(v) {
            Some(sig) if sig == expected => Ok(()),
            _ => Err("SCRAM server signature does not match: the server does not know the password".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn scram_matches_rfc_7677_example() {
        // RFC 7677 §3, with the user name left empty as PostgreSQL does; the user only enters
        // the AuthMessage through client-first-bare, so the bare message is set as in the RFC.
        let mut s = Scram::new("pencil", "rOprNGfwEbeRWgbNEkqO");
        s.client_first_bare = "n=user,r=rOprNGfwEbeRWgbNEkqO".into();
        let server_first =
            "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let fin = s.client_final(server_first).expect("final");
        assert_eq!(
            fin,
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        s.verify_server("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=").expect("server proof");
        assert!(s.verify_server("v=AAAA").is_err());
        assert!(s.verify_server("e=invalid-proof").unwrap_err().contains("invalid-proof"));
    }

    #[test]
    fn scram_refuses_a_nonce_that_does_not_extend_ours() {
        let mut s = Scram::new("pw", "abc");
        assert!(s.client_final("r=xyz123,s=AAAA,i=1").unwrap_err().contains("nonce"));
        assert!(s.client_final("r=abcdef,s=AAAA").unwrap_err().contains("'i='"));
    }

    #[test]
    fn md5_password_matches_postgres_formula() {
        // md5 + md5hex(md5hex("secretalice") + salt), computed with another MD5 implementation.
        assert_eq!(md5_password("alice", "secret", [1, 2, 3, 4]), "md598a0412b9c31436fc53776e863350083");
    }

    #[test]
    fn primitives_match_their_rfc_vectors() {
        assert_eq!(hex(&sha256(b"abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(md5_hex(b"message digest"), "f96b697d7cb7938d525a2f31aaf161d0");
        // RFC 4231 test cases 2 and 6 (a key longer than the block).
        assert_eq!(
            hex(&hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert_eq!(
            hex(&hmac_sha256(&[0xaa; 131], b"Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
        // RFC 7914 §11, first 32 of 64 bytes.
        assert_eq!(
            hex(&hi(b"passwd", b"salt", 1)),
            "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"
        );
    }

    #[test]
    fn scram_passwords_go_through_saslprep() {
        // RFC 4013 §3 examples: soft hyphen maps to nothing, U+00AA to "a", U+2168 to "IX".
        assert_eq!(prepared("I\u{AD}X"), "IX");
        assert_eq!(prepared("\u{AA}"), "a");
        assert_eq!(prepared("\u{2168}"), "IX");
        assert_eq!(prepared("pass\u{A0}word"), "pass word");
        // Prohibited (a control character): used as given, as PostgreSQL does.
        assert_eq!(prepared("a\u{7}b"), "a\u{7}b");
        let server_first = "r=abcDEF,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=16";
        let proof = |pw: &str| Scram::new(pw, "abc").client_final(server_first).expect("final");
        assert_eq!(proof("I\u{AD}X"), proof("IX"));
        assert_ne!(proof("I\u{AD}X"), proof("I-X"));
    }

    #[test]
    fn base64_known_values() {
        assert_eq!(b64_encode(b""), "");
        assert_eq!(b64_encode(b"f"), "Zg==");
        assert_eq!(b64_encode(b"fo"), "Zm8=");
        assert_eq!(b64_encode(b"foobar"), "Zm9vYmFy");
        assert_eq!(b64_decode("Zm9vYg==").unwrap(), b"foob");
        assert_eq!(b64_decode("W22ZaJ0SNY7soEsUEjb6gQ==").map(|s| s.len()), Some(16));
        assert!(b64_decode("Zm9v!").is_none());
    }

    proptest! {
        #[test]
        fn base64_round_trips(data in proptest::collection::vec(any::<u8>(), 0..200)) {
            prop_assert_eq!(b64_decode(&b64_encode(&data)).unwrap(), data);
        }
    }
}
