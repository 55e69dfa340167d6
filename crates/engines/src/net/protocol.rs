//! The benchmark protocol between the `net` client and its peer (`racehorse serve`).
//!
//! A connection starts with one hello from the client: an 8-byte magic, a version, the mode,
//! the two sizes and a token. The peer answers with one status byte and a short reason. After
//! an accepted hello the connection carries payload only, with sizes fixed by the hello:
//! - `Rr`: the client writes `request` bytes, the peer reads them all and writes `response`
//!   bytes back; repeated until the client closes.
//! - `StreamToPeer`: the client writes `request`-byte messages, the peer reads and discards.
//! - `StreamFromPeer`: the peer writes `response`-byte messages until the client closes.
//!
//! Nothing in the protocol names a command, a file or an address: the peer can only move
//! bytes of the sizes it has checked against its limits.

pub use crate::support::net_options::{Mode, MAX_MESSAGE_BYTES, MAX_TOKEN_BYTES};
use std::io::{Read, Write};

/// The first bytes of every connection.
pub const MAGIC: [u8; 8] = *b"RHNETv01";
/// The protocol version this build speaks.
pub const VERSION: u16 = 1;
/// Bytes of the hello before the token.
pub const HELLO_FIXED_BYTES: usize = 20;
/// The longest reason text in a reply.
const MAX_REASON_BYTES: usize = 200;

/// The wire codes of a connection's mode.
impl Mode {
    fn code(self) -> u8 {
        match self {
            Mode::Rr => 1,
            Mode::StreamToPeer => 2,
            Mode::StreamFromPeer => 3,
        }
    }
    fn from_code(c: u8) -> Option<Mode> {
        match c {
            1 => Some(Mode::Rr),
            2 => Some(Mode::StreamToPeer),
            3 => Some(Mode::StreamFromPeer),
            _ => None,
        }
    }
}

/// The client's opening message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hello {
    pub mode: Mode,
    /// Bytes the client writes per exchange (rr) or per message (stream to the peer).
    pub request_bytes: u32,
    /// Bytes the peer writes per exchange (rr) or per message (stream from the peer).
    pub response_bytes: u32,
    pub token: Vec<u8>,
}

/// Why a hello was refused (or could not be read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HelloError {
    BadMagic,
    BadVersion(u16),
    BadMode(u8),
    TokenTooLong(usize),
    /// A size of zero or above [`MAX_MESSAGE_BYTES`].
    BadSize(u32),
}

impl std::fmt::Display for HelloError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HelloError::BadMagic => write!(f, "not the racehorse benchmark protocol"),
            HelloError::BadVersion(v) => {
                write!(f, "protocol version {v} is not supported (this peer speaks {VERSION})")
            }
            HelloError::BadMode(m) => write!(f, "unknown mode {m}"),
            HelloError::TokenTooLong(n) => write!(f, "token of {n} bytes (at most {MAX_TOKEN_BYTES})"),
            HelloError::BadSize(s) => {
                write!(f, "message size {s} bytes is outside 1..{MAX_MESSAGE_BYTES}")
            }
        }
    }
}

impl Hello {
    /// The hello on the wire.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HELLO_FIXED_BYTES + self.token.len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_be_bytes());
        out.push(self.mode.code());
        out.push(u8::try_from(self.token.len()).unwrap_or(u8::MAX));
        out.extend_from_slice(&self.request_bytes.to_be_bytes());
        out.extend_from_slice(&self.response_bytes.to_be_bytes());
        out.extend_from_slice(&self.token);
        out
    }

    /// Checks the fixed part; returns the hello with an empty token and the token's length.
    pub fn decode_fixed(b: &[u8; HELLO_FIXED_BYTES]) -> Result<(Hello, usize), HelloError> {
        if b[..8] != MAGIC {
            return Err(HelloError::BadMagic);
        }
        let version = u16::from_be_bytes([b[8], b[9]]);
        if version != VERSION {
            return Err(HelloError::BadVersion(version));
        }
        let mode = Mode::from_code(b[10]).ok_or(HelloError::BadMode(b[10]))?;
        let token_len = b[11] as usize;
        if token_len > MAX_TOKEN_BYTES {
            return Err(HelloError::TokenTooLong(token_len));
        }
        let request_bytes = u32::from_be_bytes([b[12], b[13], b[14], b[15]]);
        let response_bytes = u32::from_be_bytes([b[16], b[17], b[18], b[19]]);
        let needed = match mode {
            Mode::Rr => [request_bytes, response_bytes],
            Mode::StreamToPeer => [request_bytes, request_bytes],
            Mode::StreamFromPeer => [response_bytes, response_bytes],
        };
        for size in needed {
            if size == 0 || size > MAX_MESSAGE_BYTES {
                return Err(HelloError::BadSize(size));
            }
        }
        Ok((Hello { mode, request_bytes, response_bytes, token: Vec::new() }, token_len))
    }

    /// Reads a whole hello from `r` (which should have a read timeout).
    pub fn read_from(r: &mut impl Read) -> Result<Result<Hello, HelloError>, std::io::Error> {
        let mut fixed = [0u8; HELLO_FIXED_BYTES];
        r.read_exact(&mut fixed)?;
        let (mut hello, token_len) = match Hello::decode_fixed(&fixed) {
            Ok(h) => h,
            Err(e) => return Ok(Err(e)),
        };
        hello.token = vec![0u8; token_len];
        r.read_exact(&mut hello.token)?;
        Ok(Ok(hello))
    }
}

/// The peer's answer to a hello.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    BadToken,
    BadHello,
    Busy,
}

impl Status {
    fn code(self) -> u8 {
        match self {
            Status::Ok => 0,
            Status::BadToken => 1,
            Status::BadHello => 2,
            Status::Busy => 3,
        }
    }
    fn from_code(c: u8) -> Option<Status> {
        match c {
            0 => Some(Status::Ok),
            1 => Some(Status::BadToken),
            2 => Some(Status::BadHello),
            3 => Some(Status::Busy),
            _ => None,
        }
    }
}

/// The reply on the wire: status, reason length, reason (UTF-8, cut to 200 bytes).
pub fn encode_reply(status: Status, reason: &str) -> Vec<u8> {
    let mut cut = reason.len().min(MAX_REASON_BYTES);
    while !reason.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut out = vec![status.code(), cut as u8];
    out.extend_from_slice(&reason.as_bytes()[..cut]);
    out
}

/// Reads a reply; an unknown status is an error.
pub fn read_reply(r: &mut impl Read) -> std::io::Result<(Status, String)> {
    let mut head = [0u8; 2];
    r.read_exact(&mut head)?;
    let status = Status::from_code(head[0]).ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidData, "the peer does not speak the benchmark protocol")
    })?;
    let mut reason = vec![0u8; head[1] as usize];
    r.read_exact(&mut reason)?;
    Ok((status, String::from_utf8_lossy(&reason).into_owned()))
}

/// Writes a reply.
pub fn write_reply(w: &mut impl Write, status: Status, reason: &str) -> std::io::Result<()> {
    w.write_all(&encode_reply(status, reason))
}

/// Compares tokens in time that does not depend on where they differ.
pub fn tokens_match(expected: &[u8], given: &[u8]) -> bool {
    if expected.len() != given.len() {
        return false;
    }
    expected.iter().zip(given).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn any_mode() -> impl Strategy<Value = Mode> {
        prop_oneof![Just(Mode::Rr), Just(Mode::StreamToPeer), Just(Mode::StreamFromPeer)]
    }

    proptest! {
        #[test]
        fn valid_hellos_round_trip(
            mode in any_mode(),
            req in 1u32..=MAX_MESSAGE_BYTES,
            resp in 1u32..=MAX_MESSAGE_BYTES,
            token in proptest::collection::vec(any::<u8>(), 0..=MAX_TOKEN_BYTES),
        ) {
            let h = Hello { mode, request_bytes: req, response_bytes: resp, token };
            let wire = h.encode();
            let back = Hello::read_from(&mut wire.as_slice()).unwrap().unwrap();
            prop_assert_eq!(back, h);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            // Either an I/O error (too short), a refusal, or a hello whose sizes are in range.
            if let Ok(Ok(h)) = Hello::read_from(&mut bytes.as_slice()) {
                prop_assert!(h.token.len() <= MAX_TOKEN_BYTES);
                prop_assert!(h.request_bytes <= MAX_MESSAGE_BYTES && h.response_bytes <= MAX_MESSAGE_BYTES);
            }
            let _ = read_reply(&mut bytes.as_slice());
        }

        #[test]
        fn replies_round_trip(code in 0u8..4, reason in "\\PC{0,300}") {
            let status = Status::from_code(code).unwrap();
            let wire = encode_reply(status, &reason);
            let (s, r) = read_reply(&mut wire.as_slice()).unwrap();
            prop_assert_eq!(s, status);
            prop_assert!(reason.starts_with(&r) && r.len() <= MAX_REASON_BYTES);
        }
    }

    #[test]
    fn bad_hellos_say_why() {
        let good = Hello { mode: Mode::Rr, request_bytes: 1, response_bytes: 1, token: b"t".to_vec() };
        let mut wire = good.encode();
        wire[0] = b'X';
        assert_eq!(Hello::read_from(&mut wire.as_slice()).unwrap(), Err(HelloError::BadMagic));
        let mut wire = good.encode();
        wire[9] = 9;
        assert_eq!(Hello::read_from(&mut wire.as_slice()).unwrap(), Err(HelloError::BadVersion(9)));
        let huge = Hello { response_bytes: u32::MAX, ..good.clone() }.encode();
        let e = Hello::read_from(&mut huge.as_slice()).unwrap().unwrap_err();
        assert_eq!(e, HelloError::BadSize(u32::MAX));
        assert!(e.to_string().contains("outside 1..1048576"), "{e}");
        let mut wire = good.encode();
        wire[11] = 200;
        assert_eq!(Hello::read_from(&mut wire.as_slice()).unwrap(), Err(HelloError::TokenTooLong(200)));
        // Stream modes check only the size they use.
        let stream = Hello { mode: Mode::StreamToPeer, request_bytes: 30 << 10, response_bytes: 0, ..good };
        assert!(Hello::read_from(&mut stream.encode().as_slice()).unwrap().is_ok());
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(tokens_match(b"secret", b"secret"));
        assert!(!tokens_match(b"secret", b"secreT"));
        assert!(!tokens_match(b"secret", b"secre"));
        assert!(tokens_match(b"", b""));
    }
}
