//! Builders for backend messages in unit tests.

/// A backend message with `tag` and `body`.
pub fn msg(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![tag];
    v.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
    v.extend_from_slice(body);
    v
}

/// An Authentication message with `code` and trailing `data`.
pub fn auth(code: u32, data: &[u8]) -> Vec<u8> {
    let mut body = code.to_be_bytes().to_vec();
    body.extend_from_slice(data);
    msg(b'R', &body)
}

/// A DataRow with the given values.
pub fn data_row(values: &[Option<&[u8]>]) -> Vec<u8> {
    let mut body = (values.len() as u16).to_be_bytes().to_vec();
    for v in values {
        match v {
            Some(v) => {
                body.extend_from_slice(&(v.len() as u32).to_be_bytes());
                body.extend_from_slice(v);
            }
            None => body.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    msg(b'D', &body)
}

/// A RowDescription with text columns of type `int4` named as given.
pub fn row_description(names: &[&str]) -> Vec<u8> {
    let mut body = (names.len() as u16).to_be_bytes().to_vec();
    for (i, n) in names.iter().enumerate() {
        body.extend_from_slice(n.as_bytes());
        body.push(0);
        body.extend_from_slice(&0u32.to_be_bytes());
        body.extend_from_slice(&(i as i16 + 1).to_be_bytes());
        body.extend_from_slice(&23u32.to_be_bytes());
        body.extend_from_slice(&4i16.to_be_bytes());
        body.extend_from_slice(&(-1i32).to_be_bytes());
        body.extend_from_slice(&0i16.to_be_bytes());
    }
    msg(b'T', &body)
}
