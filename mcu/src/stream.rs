//! Inputs as a byte stream, parsed a byte at a time from any source of bytes (a 64-byte buffer
//! whatever the file's length): GBNN probes in the CSV of `neurobits gbnn retrieve` (one probe
//! per line, `C` comma-separated symbols, `?` for an erased cluster, `-` for a silent one: the
//! core refuses it outside the sparse mode) and FlyNN input vectors
//! (one per line, `d` comma-separated numbers, parsed as `f32` exactly as the host's reader
//! does: Rust's correctly rounded `str::parse`); blank lines are skipped. Under QEMU the source
//! is a host file read through semihosting; on a board, RTT or a UART.

use neurobits_core::gbnn::{ERASED, SILENT};

/// Why a probe line was refused: `(line, what)`.
pub type BadLine = (u32, &'static str);

/// A parser over a source of bytes (`fill` refills a buffer and returns how many bytes came;
/// 0 is the end).
pub struct ProbeStream<F: FnMut(&mut [u8]) -> usize> {
    fill: F,
    buf: [u8; 64],
    at: usize,
    len: usize,
    line: u32,
}

impl<F: FnMut(&mut [u8]) -> usize> ProbeStream<F> {
    /// A stream over `fill`.
    pub fn new(fill: F) -> Self {
        ProbeStream { fill, buf: [0; 64], at: 0, len: 0, line: 0 }
    }

    /// Reads the next vector of numbers into `out` (its length is d): `Ok(false)` at the end of
    /// the stream.
    #[allow(dead_code)] // the FlyNN mode's (feature flynn)
    pub fn next_vector(&mut self, out: &mut [f32]) -> Result<bool, BadLine> {
        loop {
            self.line += 1;
            let (mut field, mut text, mut len) = (0usize, [0u8; 48], 0usize);
            loop {
                let b = self.byte();
                match b {
                    Some(b' ' | b'\t' | b'\r') => {}
                    Some(b',') | Some(b'\n') | None => {
                        if len == 0 && field == 0 && b != Some(b',') {
                            if b.is_none() {
                                return Ok(false);
                            }
                            break; // a blank line
                        }
                        if field >= out.len() {
                            return Err((self.line, "more fields than inputs"));
                        }
                        let value = core::str::from_utf8(&text[..len]).ok().and_then(|t| t.parse::<f32>().ok());
                        out[field] = value.ok_or((self.line, "a field that is not a number"))?;
                        field += 1;
                        len = 0;
                        if b != Some(b',') {
                            if field != out.len() {
                                return Err((self.line, "fewer fields than inputs"));
                            }
                            return Ok(true);
                        }
                    }
                    Some(c) => {
                        if len == text.len() {
                            return Err((self.line, "a field longer than 48 bytes"));
                        }
                        text[len] = c;
                        len += 1;
                    }
                }
            }
        }
    }

    fn byte(&mut self) -> Option<u8> {
        if self.at == self.len {
            self.len = (self.fill)(&mut self.buf);
            self.at = 0;
            if self.len == 0 {
                return None;
            }
        }
        self.at += 1;
        Some(self.buf[self.at - 1])
    }

    /// Reads the next probe into `out` (its length is C; symbols must be below `l`): `Ok(false)`
    /// at the end of the stream.
    pub fn next(&mut self, out: &mut [u16], l: usize) -> Result<bool, BadLine> {
        loop {
            self.line += 1;
            let (mut field, mut value, mut digits, mut any) = (0usize, 0u32, 0u32, false);
            // `?` or `-`: the field's mark instead of a symbol.
            let mut mark: Option<u16> = None;
            loop {
                let b = self.byte();
                match b {
                    Some(b' ' | b'\t' | b'\r') => {}
                    Some(b'0'..=b'9') if mark.is_none() => {
                        value = value.saturating_mul(10).saturating_add((b.unwrap_or(0) - b'0') as u32);
                        digits += 1;
                        any = true;
                    }
                    Some(m @ (b'?' | b'-')) if digits == 0 && mark.is_none() => {
                        mark = Some(if m == b'?' { ERASED } else { SILENT });
                        any = true;
                    }
                    Some(b',') | Some(b'\n') | None => {
                        if !any && field == 0 && b != Some(b',') {
                            if b.is_none() {
                                return Ok(false);
                            }
                            break; // a blank line
                        }
                        if field >= out.len() {
                            return Err((self.line, "more fields than clusters"));
                        }
                        if mark.is_none() && digits == 0 {
                            return Err((self.line, "an empty field"));
                        }
                        if mark.is_none() && value as usize >= l {
                            return Err((self.line, "a symbol not below L"));
                        }
                        out[field] = mark.unwrap_or(value as u16);
                        field += 1;
                        (value, mark, digits) = (0, None, 0);
                        if b != Some(b',') {
                            if field != out.len() {
                                return Err((self.line, "fewer fields than clusters"));
                            }
                            return Ok(true);
                        }
                    }
                    Some(_) => return Err((self.line, "a byte other than a digit, '?', '-', ',' or a line end")),
                }
            }
        }
    }
}
