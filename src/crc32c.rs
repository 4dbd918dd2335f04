//! CRC-32C (Castagnoli, "iSCSI"), TFRecord's checksum.
//!
//! Natively crc-fast's folding (AVX-512 / PCLMULQDQ / ARMv8, chosen at run time). Built for
//! the browser (wasm32, the page in web/), a slice-by-8 table of 8 KiB made at compile
//! time instead: crc-fast's portable code keeps a 4 to 32 KiB table for each of the CRCs
//! it knows, about 700 KB, most of what the page would download.

/// The CRC-32C of `data` (unmasked).
pub(crate) fn checksum(data: &[u8]) -> u32 {
    #[cfg(not(target_family = "wasm"))]
    {
        // The algorithm's check value is 32 bits wide; crc-fast returns it in a u64.
        crc_fast::checksum(crc_fast::CrcAlgorithm::Crc32Iscsi, data) as u32
    }
    #[cfg(target_family = "wasm")]
    {
        !portable::update(!0, data)
    }
}

/// A CRC-32C computed over several runs of bytes.
pub(crate) struct Digest {
    #[cfg(not(target_family = "wasm"))]
    inner: crc_fast::Digest,
    #[cfg(target_family = "wasm")]
    state: u32,
}

impl Digest {
    pub(crate) fn new() -> Self {
        Digest {
            #[cfg(not(target_family = "wasm"))]
            inner: crc_fast::Digest::new(crc_fast::CrcAlgorithm::Crc32Iscsi),
            #[cfg(target_family = "wasm")]
            state: !0,
        }
    }

    pub(crate) fn update(&mut self, data: &[u8]) {
        #[cfg(not(target_family = "wasm"))]
        self.inner.update(data);
        #[cfg(target_family = "wasm")]
        {
            self.state = portable::update(self.state, data);
        }
    }

    pub(crate) fn finalize(&self) -> u32 {
        #[cfg(not(target_family = "wasm"))]
        {
            self.inner.finalize() as u32
        }
        #[cfg(target_family = "wasm")]
        {
            !self.state
        }
    }
}

/// Slice-by-8 over the reflected polynomial (the `crc32c` of RFC 3720, B.4).
#[cfg(any(test, target_family = "wasm"))]
mod portable {
    const POLY: u32 = 0x82f6_3b78;

    static TABLE: [[u32; 256]; 8] = table();

    const fn table() -> [[u32; 256]; 8] {
        let mut t = [[0u32; 256]; 8];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 { (c >> 1) ^ POLY } else { c >> 1 };
                k += 1;
            }
            t[0][i] = c;
            i += 1;
        }
        let mut i = 0;
        while i < 256 {
            let mut j = 1;
            while j < 8 {
                t[j][i] = (t[j - 1][i] >> 8) ^ t[0][(t[j - 1][i] & 0xff) as usize];
                j += 1;
            }
            i += 1;
        }
        t
    }

    /// The running (inverted) CRC `crc` after `data`.
    pub(super) fn update(mut crc: u32, data: &[u8]) -> u32 {
        let t = &TABLE;
        let mut chunks = data.chunks_exact(8);
        for c in &mut chunks {
            let lo = u32::from_le_bytes([c[0], c[1], c[2], c[3]]) ^ crc;
            let hi = u32::from_le_bytes([c[4], c[5], c[6], c[7]]);
            crc = t[7][(lo & 0xff) as usize]
                ^ t[6][((lo >> 8) & 0xff) as usize]
                ^ t[5][((lo >> 16) & 0xff) as usize]
                ^ t[4][(lo >> 24) as usize]
                ^ t[3][(hi & 0xff) as usize]
                ^ t[2][((hi >> 8) & 0xff) as usize]
                ^ t[1][((hi >> 16) & 0xff) as usize]
                ^ t[0][(hi >> 24) as usize];
        }
        for &b in chunks.remainder() {
            crc = t[0][((crc ^ b as u32) & 0xff) as usize] ^ (crc >> 8);
        }
        crc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_portable_table_gives_crc_fast_s_answers() {
        // The check value of CRC-32C (the CRC catalogue's "123456789").
        assert_eq!(!portable::update(!0, b"123456789"), 0xe306_9283);
        let data: Vec<u8> = (0..5000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for n in [0, 1, 7, 8, 9, 63, 64, 1000, 4999, 5000] {
            assert_eq!(
                !portable::update(!0, &data[..n]),
                checksum(&data[..n]),
                "{n} bytes"
            );
        }
        let mut d = Digest::new();
        d.update(&data[..1234]);
        d.update(&data[1234..]);
        assert_eq!(
            d.finalize(),
            !portable::update(portable::update(!0, &data[..1234]), &data[1234..])
        );
    }
}
