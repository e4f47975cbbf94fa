//! Random identifiers and secrets: connection ids, artifact ids, tokens, signing keys. All come
//! from the OS-seeded CSPRNG; ids are at least 128 bits, as the spec asks.

use rand::RngCore;

pub fn random_bytes(len: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; len];
    rand::rng().fill_bytes(&mut bytes);
    bytes
}

/// `len` random bytes as lowercase hex (`2 * len` characters).
pub fn random_hex(len: usize) -> String {
    hex::encode(random_bytes(len))
}
