package bpe

// byteRunes is GPT-2's bytes_to_unicode: byte b is written in the vocabulary
// as the rune byteRunes[b]. Printable Latin-1 bytes map to themselves; the
// rest map, in byte order, to U+0100 onwards.
var byteRunes = func() (m [256]rune) {
	n := rune(0)
	for b := 0; b < 256; b++ {
		if ('!' <= b && b <= '~') || (0xA1 <= b && b <= 0xAC) || (0xAE <= b && b <= 0xFF) {
			m[b] = rune(b)
		} else {
			m[b] = 256 + n
			n++
		}
	}
	return m
}()

// runeByte is the inverse of byteRunes, indexed by rune (all are < 0x144).
var runeByte = func() (m [0x144]int16) {
	for i := range m {
		m[i] = -1
	}
	for b, r := range byteRunes {
		m[r] = int16(b)
	}
	return m
}()

// fromByteLevel decodes a byte-level token string to the bytes it stands
// for. ok is false when a rune is outside the byte-level alphabet.
func fromByteLevel(tok string) (out []byte, ok bool) {
	out = make([]byte, 0, len(tok))
	for _, r := range tok {
		if r < 0 || int(r) >= len(runeByte) || runeByte[r] < 0 {
			return nil, false
		}
		out = append(out, byte(runeByte[r]))
	}
	return out, true
}
