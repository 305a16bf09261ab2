//! Script text that need not be UTF-8, carried without loss. pgbench sends a script's bytes as
//! they are (a Latin-1 script under `PGCLIENTENCODING=LATIN1`, or an invalid sequence the server
//! then rejects); the script language here works on `str`, so bytes that are not part of valid
//! UTF-8 are held as *stand-in characters*: byte `b` becomes U+10FF00 + `b` (plane 16, private
//! use). A genuine character from that range in the input is held byte by byte the same way, so
//! every stand-in means exactly one byte and [`encode_into`] gives back the input's bytes.
//!
//! Stand-ins are non-ASCII, so the lexer treats them as pgbench treats high-bit bytes
//! (identifier characters); their UTF-8 form starts with 0xF4, which nothing else in decoded text
//! does, so text without a stand-in is sent as it is.

/// First stand-in character (for byte 0x00); the last is U+10FFFF (byte 0xFF).
const BASE: u32 = 0x10_FF00;
/// Lead byte of every stand-in's UTF-8 form (and of no other character decoded text can hold).
const LEAD: u8 = 0xF4;

fn stand_in(b: u8) -> char {
    char::from_u32(BASE + b as u32).expect("plane-16 code point")
}

fn is_stand_in(c: char) -> bool {
    c as u32 >= BASE
}

/// The text form of `bytes`: valid UTF-8 as is (borrowed, unless it holds a stand-in range
/// character), every other byte as its stand-in.
pub fn decode(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) if !bytes.contains(&LEAD) => text.into(),
        _ => decode_owned(bytes).into(),
    }
}

fn decode_owned(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if is_stand_in(c) {
                let mut utf8 = [0u8; 4];
                out.extend(c.encode_utf8(&mut utf8).bytes().map(stand_in));
            } else {
                out.push(c);
            }
        }
        out.extend(chunk.invalid().iter().copied().map(stand_in));
    }
    out
}

/// True if `text` holds a stand-in (so its bytes differ from its UTF-8 form).
pub fn has_stand_ins(text: &str) -> bool {
    text.as_bytes().contains(&LEAD) && text.chars().any(is_stand_in)
}

/// Appends the bytes `text` stands for (the inverse of [`decode`]).
pub fn encode_into(text: &str, out: &mut Vec<u8>) {
    if !text.as_bytes().contains(&LEAD) {
        out.extend_from_slice(text.as_bytes());
        return;
    }
    for c in text.chars() {
        if is_stand_in(c) {
            out.push((c as u32 - BASE) as u8);
        } else {
            let mut utf8 = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
        }
    }
}

/// The bytes `text` stands for.
pub fn encode(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    encode_into(text, &mut out);
    out
}

/// `text` for a message: stand-ins shown as U+FFFD, as a lossy UTF-8 reading would show them.
pub fn display(text: &str) -> std::borrow::Cow<'_, str> {
    if !has_stand_ins(text) {
        return text.into();
    }
    text.chars()
        .map(|c| if is_stand_in(c) { '\u{FFFD}' } else { c })
        .collect::<String>()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_sequence_round_trips() {
        let samples: [&[u8]; 6] = [
            b"select 'caf\xe9'",
            b"plain ascii",
            "d\u{e9}j\u{e0} UTF-8".as_bytes(),
            b"\xff\xfe\x80 lone bytes \xc3",
            "a real U+10FF41: \u{10FF41}".as_bytes(),
            b"\xf4\x8f\xbd\x81 and a cut one \xf4\x8f",
        ];
        for s in samples {
            assert_eq!(encode(&decode(s)), s, "{s:?}");
        }
        for b in 0..=255u8 {
            let bytes = [b'x', b, b'y'];
            assert_eq!(encode(&decode(&bytes)), bytes);
        }
    }

    #[test]
    fn utf8_text_is_unchanged_and_bad_bytes_are_not_ascii() {
        assert!(matches!(
            decode("s\u{e9}lect".as_bytes()),
            std::borrow::Cow::Borrowed("s\u{e9}lect")
        ));
        assert!(!has_stand_ins("s\u{e9}lect"));
        let t = decode(b"caf\xe9");
        assert!(has_stand_ins(&t));
        assert!(t.chars().last().is_some_and(|c| !c.is_ascii()));
        assert_eq!(display(&t), "caf\u{FFFD}");
    }
}
