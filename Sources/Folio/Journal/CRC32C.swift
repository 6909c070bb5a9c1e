/// CRC-32C (Castagnoli), the checksum of journal records: software, slicing-by-8.
enum CRC32C {
    private static let tables: [[UInt32]] = {
        var tables = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for index in 0..<256 {
            var crc = UInt32(index)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            tables[0][index] = crc
        }
        for index in 0..<256 {
            var crc = tables[0][index]
            for table in 1..<8 {
                crc = tables[0][Int(crc & 0xFF)] ^ (crc >> 8)
                tables[table][index] = crc
            }
        }
        return tables
    }()

    /// The checksum of `bytes`, continuing from `seed` (0 for a fresh checksum).
    static func checksum(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
        var crc = ~seed
        var index = 0
        let count = bytes.count
        tables.withUnsafeBufferPointer { t in
            let t0 = t[0], t1 = t[1], t2 = t[2], t3 = t[3], t4 = t[4], t5 = t[5], t6 = t[6], t7 = t[7]
            while index + 8 <= count {
                let low =
                    crc
                    ^ (UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8
                        | UInt32(bytes[index + 2]) << 16 | UInt32(bytes[index + 3]) << 24)
                crc =
                    t7[Int(low & 0xFF)] ^ t6[Int((low >> 8) & 0xFF)] ^ t5[Int((low >> 16) & 0xFF)] ^ t4[Int(low >> 24)]
                    ^ t3[Int(bytes[index + 4])] ^ t2[Int(bytes[index + 5])] ^ t1[Int(bytes[index + 6])] ^ t0[Int(bytes[index + 7])]
                index += 8
            }
            while index < count {
                crc = t0[Int((crc ^ UInt32(bytes[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
        }
        return ~crc
    }

    static func checksum(_ bytes: [UInt8], seed: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0, seed: seed) }
    }
}
