#!/usr/bin/python3
"""Builds tests/fixtures/text/random_unicode.txt: pseudo-random strings (fixed seed) over the
character classes the standard tokenizer distinguishes (letters of many scripts, digits, the
UAX#29 Mid*/ExtendNumLet/quote classes, Extend/Format/ZWJ, emoji parts, Han/Kana/Hangul/Thai,
spaces), including long strings around the 255-unit token cap, then strings of code points
drawn from the whole BMP and plane 1 (catches Unicode-version differences between Lucene's
tables and ICU's). No CR/LF (lines are inputs).
Usage: make_random.py > tests/fixtures/text/random_unicode.txt"""
import random

POOL = {
    "ascii_letter": "aZkQx", "digit": "0479", "ascii_punct": ".,;:'\"_-/@#*!?()&",
    "latin": "éÅßÆøÐŁœĳǅİ", "greek": "αΩςΣ", "cyrillic": "жЁя", "armenian": "աՁ",
    "hebrew": "אבשת", "arabic": "مرح١٢", "devanagari": "नमस्", "thai": "กขัาไ", "lao": "ກາ",
    "han": "中文字", "hiragana": "ひらがなゝ", "katakana": "カタナー", "halfkana": "ｶﾀﾅ",
    "hangul": "한국어", "fullwidth": "ａＺ０９＿", "math": "𝐀𝐳", "cjk_ext": "𠀀",
    "combining": "\u0301\u0308\u20e3", "format": "\u00ad\u200e\u2060", "zwj": "\u200d",
    "zwnj": "\u200c", "vs": "\ufe0f\ufe0e",
    "midletter": "\u00b7\u2027\ufe13", "midnum": "\u066c\ufe50\ufe54", "midnumlet": "\u2018\u2019\u2024\ufe52",
    "extnumlet": "\u203f\ufe33\uff3f",
    "emoji": "😀👍❤☕🥰🫠©™", "emod": "🏽🏻", "ri": "🇫🇷🇯", "tag": "\U000e0067\U000e007f",
    "space": " \t\u00a0\u3000\u2028\u0085", "other": "¿§°€½²①",
}
KEYS = sorted(POOL)

def rand_string(rng, n):
    out = []
    for _ in range(n):
        k = rng.choice(KEYS) if rng.random() < 0.6 else rng.choice(["ascii_letter", "digit", "space", "ascii_punct"])
        out.append(rng.choice(POOL[k]))
    return "".join(out)

def main():
    rng = random.Random(20261130)
    lines = []
    for i in range(600):
        lines.append(rand_string(rng, rng.randint(1, 30)))
    for i in range(40):  # around the 255 UTF-16 unit cap
        body = "".join(rng.choice("abc1") for _ in range(rng.randint(240, 256)))
        lines.append(body + rand_string(rng, rng.randint(1, 20)))
    for i in range(20):
        lines.append("".join(rng.choice(POOL[rng.choice(KEYS)]) for _ in range(rng.randint(200, 300))))
    wide = random.Random(99)
    def wide_cp():
        r = wide.random()
        if r < 0.3:
            return wide.choice("abc 1.,'_ ")
        c = wide.randint(0xA0, 0xFFFD) if r < 0.8 else wide.randint(0x10000, 0x1FFFF)
        if 0xD800 <= c <= 0xDFFF or c in (0x85, 0x2028, 0x2029):
            return " "
        return chr(c)
    for i in range(1000):
        lines.append("".join(wide_cp() for _ in range(wide.randint(1, 25))))
    for l in lines:
        assert "\n" not in l and "\r" not in l
        print(l)

main()
