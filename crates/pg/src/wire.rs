//! PostgreSQL frontend/backend protocol 3.0 framing: the frontend messages the client sends
//! (startup, password/SASL, simple query, Parse/Bind/Execute/Sync, Terminate)
//! encoded into a reusable buffer, and the backend messages read from the socket: a tag byte,
//! a big-endian length that counts itself, the body.

use std::io::{self, Read};

/// Protocol version 3.0 as the startup message carries it.
pub const PROTOCOL_3_0: i32 = 196_608;
/// Largest backend message accepted (a corrupt length must not allocate gigabytes).
pub const MAX_MESSAGE_BYTES: usize = 256 << 20;

/// Backend message tags the client acts on (it passes over the others).
pub mod tag {
    pub const AUTH: u8 = b'R';
    pub const READY: u8 = b'Z';
    pub const DATA_ROW: u8 = b'D';
    pub const COMMAND_COMPLETE: u8 = b'C';
    pub const ERROR: u8 = b'E';
}

fn put_i32(out: &mut Vec<u8>, v: i32) {
    out.extend_from_slice(&v.to_be_bytes());
}
fn put_i16(out: &mut Vec<u8>, v: i16) {
    out.extend_from_slice(&v.to_be_bytes());
}
fn put_cstr(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
    out.push(0);
}

/// Starts a tagged message; [`end`] fills in its length.
fn begin(out: &mut Vec<u8>, tag: u8) -> usize {
    out.push(tag);
    let at = out.len();
    put_i32(out, 0);
    at
}
fn end(out: &mut [u8], at: usize) {
    let len = (out.len() - at) as i32;
    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

/// StartupMessage: version 3.0 and `key\0value\0` pairs.
pub fn startup(out: &mut Vec<u8>, params: &[(&str, &str)]) {
    let at = out.len();
    put_i32(out, 0);
    put_i32(out, PROTOCOL_3_0);
    for (k, v) in params {
        put_cstr(out, k);
        put_cstr(out, v);
    }
    out.push(0);
    end(out, at);
}

/// PasswordMessage (cleartext or md5 answer).
pub fn password(out: &mut Vec<u8>, text: &str) {
    let at = begin(out, b'p');
    put_cstr(out, text);
    end(out, at);
}

/// SASLInitialResponse: the mechanism and the client-first message.
pub fn sasl_initial(out: &mut Vec<u8>, mechanism: &str, data: &[u8]) {
    let at = begin(out, b'p');
    put_cstr(out, mechanism);
    put_i32(out, data.len() as i32);
    out.extend_from_slice(data);
    end(out, at);
}

/// SASLResponse: the client-final message.
pub fn sasl_response(out: &mut Vec<u8>, data: &[u8]) {
    let at = begin(out, b'p');
    out.extend_from_slice(data);
    end(out, at);
}

/// Query (simple protocol).
pub fn query(out: &mut Vec<u8>, sql: &str) {
    let at = begin(out, b'Q');
    put_cstr(out, sql);
    end(out, at);
}

/// Parse: a named prepared statement; parameter types left to the server.
pub fn parse(out: &mut Vec<u8>, name: &str, sql: &str) {
    let at = begin(out, b'P');
    put_cstr(out, name);
    put_cstr(out, sql);
    put_i16(out, 0);
    end(out, at);
}

/// A parameter value for `bind`, sent in text format.
#[derive(Debug, Clone, PartialEq)]
pub enum Param<'a> {
    Int(i64),
    Text(&'a str),
    Null,
}

/// Bind: the unnamed portal over statement `name`, parameters and results in text format.
pub fn bind(out: &mut Vec<u8>, name: &str, params: &[Param]) {
    let at = begin(out, b'B');
    out.push(0); // unnamed portal
    put_cstr(out, name);
    put_i16(out, 0); // all parameters text
    put_i16(out, params.len() as i16);
    let mut digits = itoa_buf::default();
    for p in params {
        match p {
            Param::Int(v) => {
                let s = digits.format(*v);
                put_i32(out, s.len() as i32);
                out.extend_from_slice(s);
            }
            Param::Text(s) => {
                put_i32(out, s.len() as i32);
                out.extend_from_slice(s.as_bytes());
            }
            Param::Null => put_i32(out, -1),
        }
    }
    put_i16(out, 0); // all results text
    end(out, at);
}

/// Integer formatting without allocation.
mod itoa_buf {
    #[derive(Default)]
    pub struct Buf([u8; 20]);
    pub fn default() -> Buf {
        Buf::default()
    }
    impl Buf {
        pub fn format(&mut self, v: i64) -> &[u8] {
            let mut n = v.unsigned_abs();
            let mut i = self.0.len();
            loop {
                i -= 1;
                self.0[i] = b'0' + (n % 10) as u8;
                n /= 10;
                if n == 0 {
                    break;
                }
            }
            if v < 0 {
                i -= 1;
                self.0[i] = b'-';
            }
            &self.0[i..]
        }
    }
}

/// Execute the unnamed portal, all rows.
pub fn execute(out: &mut Vec<u8>) {
    let at = begin(out, b'E');
    out.push(0);
    put_i32(out, 0);
    end(out, at);
}

/// Sync: ends an extended-protocol batch; the server answers ReadyForQuery.
pub fn sync(out: &mut Vec<u8>) {
    out.extend_from_slice(&[b'S', 0, 0, 0, 4]);
}

/// Terminate: a polite goodbye.
pub fn terminate(out: &mut Vec<u8>) {
    out.extend_from_slice(&[b'X', 0, 0, 0, 4]);
}

/// Reads one backend message into `body` (reused); returns its tag.
pub fn read_message(r: &mut impl Read, body: &mut Vec<u8>) -> io::Result<u8> {
    let mut head = [0u8; 5];
    r.read_exact(&mut head)?;
    let len = i32::from_be_bytes([head[1], head[2], head[3], head[4]]);
    if len < 4 || len as usize - 4 > MAX_MESSAGE_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("backend message '{}' has an impossible length {len}", head[0].escape_ascii()),
        ));
    }
    body.clear();
    body.resize(len as usize - 4, 0);
    r.read_exact(body)?;
    Ok(head[0])
}

/// A cursor over a message body.
pub struct Body<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Body<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Body { data, pos: 0 }
    }
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.data.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        Some(s)
    }
    pub fn i32(&mut self) -> Option<i32> {
        self.take(4).map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub fn i16(&mut self) -> Option<i16> {
        self.take(2).map(|b| i16::from_be_bytes([b[0], b[1]]))
    }
    pub fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    /// A NUL-terminated string.
    pub fn cstr(&mut self) -> Option<&'a str> {
        let rest = self.data.get(self.pos..)?;
        let n = rest.iter().position(|&b| b == 0)?;
        self.pos += n + 1;
        std::str::from_utf8(&rest[..n]).ok()
    }
    /// Whatever is left.
    pub fn rest(&mut self) -> &'a [u8] {
        let r = &self.data[self.pos.min(self.data.len())..];
        self.pos = self.data.len();
        r
    }
}

/// The fields of an ErrorResponse or NoticeResponse.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerError {
    pub severity: String,
    /// The SQLSTATE code, e.g. `28P01` (invalid password), `40P01` (deadlock).
    pub code: String,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
}

impl std::fmt::Display for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.severity, self.code, self.message)?;
        if let Some(d) = &self.detail {
            write!(f, " ({d})")?;
        }
        if let Some(h) = &self.hint {
            write!(f, "; hint: {h}")?;
        }
        Ok(())
    }
}

/// Decodes an ErrorResponse/NoticeResponse body: (field type, string) pairs up to a 0 byte.
pub fn parse_error(body: &[u8]) -> ServerError {
    let mut b = Body::new(body);
    let mut e = ServerError::default();
    while let Some(kind) = b.u8() {
        if kind == 0 {
            break;
        }
        let Some(value) = b.cstr() else { break };
        match kind {
            b'V' => e.severity = value.to_string(),
            b'S' if e.severity.is_empty() => e.severity = value.to_string(),
            b'C' => e.code = value.to_string(),
            b'M' => e.message = value.to_string(),
            b'D' => e.detail = Some(value.to_string()),
            b'H' => e.hint = Some(value.to_string()),
            _ => {}
        }
    }
    e
}

/// Decodes a DataRow into its column values (None = SQL NULL); None if malformed.
pub fn parse_data_row(body: &[u8]) -> Option<Vec<Option<&[u8]>>> {
    let mut b = Body::new(body);
    let n = b.i16()?;
    let mut cols = Vec::with_capacity(n.max(0) as usize);
    for _ in 0..n {
        let len = b.i32()?;
        cols.push(if len < 0 { None } else { Some(b.take(len as usize)?) });
    }
    Some(cols)
}

/// The row count at the end of a CommandComplete tag ("UPDATE 1", "INSERT 0 1", "SELECT 100").
pub fn command_rows(tag_text: &str) -> Option<u64> {
    tag_text.rsplit(' ').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn framed(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut v = vec![tag];
        v.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        v.extend_from_slice(body);
        v
    }

    #[test]
    fn startup_and_sync_have_the_documented_layout() {
        let mut out = Vec::new();
        startup(&mut out, &[("user", "u")]);
        assert_eq!(&out[..8], &[0, 0, 0, 16, 0, 3, 0, 0]);
        assert_eq!(&out[8..], b"user\0u\0\0");
        out.clear();
        sync(&mut out);
        terminate(&mut out);
        assert_eq!(out, b"S\0\0\0\x04X\0\0\0\x04");
    }

    #[test]
    fn bind_sends_text_parameters() {
        let mut out = Vec::new();
        bind(&mut out, "s1", &[Param::Int(-42), Param::Text("ab"), Param::Null]);
        let mut b = Body::new(&out[5..]);
        assert_eq!(out[0], b'B');
        assert_eq!(i32::from_be_bytes([out[1], out[2], out[3], out[4]]) as usize, out.len() - 1);
        assert_eq!((b.cstr(), b.cstr(), b.i16(), b.i16()), (Some(""), Some("s1"), Some(0), Some(3)));
        assert_eq!((b.i32(), b.take(3)), (Some(3), Some(&b"-42"[..])));
        assert_eq!((b.i32(), b.take(2)), (Some(2), Some(&b"ab"[..])));
        assert_eq!((b.i32(), b.i16(), b.rest().len()), (Some(-1), Some(0), 0));
    }

    #[test]
    fn error_fields_are_read() {
        let body = b"SFATAL\0VFATAL\0C28P01\0Mpassword authentication failed for user \"x\"\0Hcheck it\0\0";
        let e = parse_error(body);
        assert_eq!((e.severity.as_str(), e.code.as_str()), ("FATAL", "28P01"));
        assert!(e.to_string().contains("password authentication failed"), "{e}");
        assert!(e.to_string().contains("hint: check it"));
    }

    #[test]
    fn impossible_lengths_are_refused() {
        let mut body = Vec::new();
        let bad = [b'Z', 0, 0, 0, 2];
        assert!(read_message(&mut &bad[..], &mut body).is_err());
        let huge = [b'D', 0x7f, 0xff, 0xff, 0xff];
        assert!(read_message(&mut &huge[..], &mut body).is_err());
        assert_eq!(command_rows("INSERT 0 1"), Some(1));
        assert_eq!(command_rows("BEGIN"), None);
    }

    proptest! {
        #[test]
        fn data_rows_round_trip(cols in proptest::collection::vec(
            proptest::option::of(proptest::collection::vec(any::<u8>(), 0..40)), 0..12)) {
            let mut body = (cols.len() as i16).to_be_bytes().to_vec();
            for c in &cols {
                match c {
                    Some(v) => { body.extend_from_slice(&(v.len() as i32).to_be_bytes()); body.extend_from_slice(v); }
                    None => body.extend_from_slice(&(-1i32).to_be_bytes()),
                }
            }
            let wire = framed(tag::DATA_ROW, &body);
            let mut buf = Vec::new();
            prop_assert_eq!(read_message(&mut &wire[..], &mut buf).unwrap(), tag::DATA_ROW);
            let got = parse_data_row(&buf).unwrap();
            let want: Vec<Option<&[u8]>> = cols.iter().map(|c| c.as_deref()).collect();
            prop_assert_eq!(got, want);
        }

        #[test]
        fn garbage_never_panics(data in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut buf = Vec::new();
            let _ = read_message(&mut &data[..], &mut buf);
            let _ = parse_data_row(&data);
            let _ = parse_error(&data);
        }

        #[test]
        fn integers_format_like_display(v in any::<i64>()) {
            let mut b = itoa_buf::default();
            let want = v.to_string();
            prop_assert_eq!(b.format(v), want.as_bytes());
        }
    }
}
