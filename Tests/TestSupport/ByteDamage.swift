/// One random byte of damage, as the randomized decoder tests apply to a line now and then: a
/// byte replaced, removed, or inserted, at a random place.
public func damageOneByte(_ bytes: inout [UInt8], using rng: inout some RandomNumberGenerator) {
    let at = Int.random(in: 0..<max(1, bytes.count), using: &rng)
    switch Int.random(in: 0..<3, using: &rng) {
    case 0 where !bytes.isEmpty: bytes[at] = UInt8.random(in: 0...255, using: &rng)
    case 1 where !bytes.isEmpty: bytes.remove(at: at)
    default: bytes.insert(UInt8.random(in: 0...255, using: &rng), at: min(at, bytes.count))
    }
}
