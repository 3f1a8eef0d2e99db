#!/usr/bin/env python3
"""Writes the word list of the light-stemmer oracle (tests/fixtures/text/light_words.txt):
lines "<language>\t<word>", 2,000 lowercase words per language sampled evenly from Debian's
word lists (packages wngerman, wfrench, wspanish, witalian, wportuguese), so that every
suffix rule of the German, French, Spanish, Italian and Portuguese light stemmers is met.
Generated words for the Arabic, Hindi and Indonesian stemmers follow.
Usage: make_light_words.py > tests/fixtures/text/light_words.txt"""
import sys

LISTS = [("german", "/usr/share/dict/ngerman"), ("french", "/usr/share/dict/french"),
         ("spanish", "/usr/share/dict/spanish"), ("italian", "/usr/share/dict/italian"),
         ("portuguese", "/usr/share/dict/portuguese")]
PER_LANGUAGE = 2000

for lang, path in LISTS:
    with open(path, encoding="utf-8") as f:
        words = sorted({w.strip().lower() for w in f
                        if w.strip().isalpha() and len(w.strip()) >= 3})
    step = max(1, len(words) // PER_LANGUAGE)
    for w in words[::step][:PER_LANGUAGE]:
        sys.stdout.write("%s\t%s\n" % (lang, w))

# The Arabic, Hindi, Indonesian (and Bulgarian, below) stemmers (and the Arabic/Indic/Hindi normalizers before
# them): every prefix x stem x suffix combination over seed lists, so that each rule (and the
# length conditions around it) is met.
GENERATED = [
    ("arabic", ["", "ال", "وال", "بال", "كال", "فال", "لل", "و", "ب", "ف", "أ"],
     ["كتب", "درس", "علم", "مدرس", "قلم", "بيت", "ول", "طالب", "سلام", "عربى", "مُعَلِّم",
      "إسلام", "آمن", "ـكتـ"],
     ["", "ها", "ان", "ات", "ون", "ين", "يه", "ية", "ه", "ة", "ي", "هما", "تان", "ى"]),
    ("hindi", ["", "अ", "न्"],
     ["लड़क", "किताब", "पढ़", "खा", "जा", "बच्च", "खेल", "देख", "क", "सुन", "भारत", "राम", "ऑफ़िस",
      "क़लम", "अँधेर", "सम्बन्ध"],
     ["", "ो", "े", "ू", "ु", "ी", "ि", "ा", "कर", "ाओ", "िए", "ाई", "ाए", "ने", "नी", "ना", "ते",
      "ीं", "ती", "ता", "ाँ", "ां", "ों", "ें", "ाकर", "ाइए", "ाईं", "ाया", "ेगी", "ेगा", "ोगी",
      "ोगे", "ाने", "ाना", "ाते", "ाती", "ाता", "तीं", "ाओं", "ाएं", "ुओं", "ुएं", "ुआं", "ाएगी",
      "ाएगा", "ाओगी", "ाओगे", "एंगी", "ेंगी", "एंगे", "ेंगे", "ूंगी", "ूंगा", "ातीं", "नाओं",
      "नाएं", "ताओं", "ताएं", "ियाँ", "ियों", "ियां", "ाएंगी", "ाएंगे", "ाऊंगी", "ाऊंगा", "ाइयाँ",
      "ाइयों", "ाइयां"]),
    ("indonesian", ["", "me", "mem", "men", "meng", "meny", "pe", "pem", "pen", "peng", "peny",
                    "di", "ter", "ke", "ber", "be", "per", "memper", "diper", "se"],
     ["baca", "tulis", "apu", "pukul", "kerja", "ajar", "bangun", "lihat", "makan", "ambil",
      "sakit", "rasa", "kata", "tahu", "lajar", "indah", "usir", "si"],
     ["", "kan", "an", "i", "nya", "ku", "mu", "lah", "kah", "pun", "kannya", "annya", "si"]),
]
GENERATED.append(
    ("bulgarian", [""],
     ["град", "учител", "книг", "стол", "човек", "момч", "жен", "път", "ден", "вълк", "бряг",
      "приятел", "море", "сън", "кон", "лек", "орех", "пет", "бащ"],
     ["", "ът", "ят", "ия", "ият", "то", "те", "та", "а", "о", "е", "я", "и", "ове", "овци",
      "еве", "ища", "ищата", "ци", "зи", "си", "ен", "ена", "ени", "ите", "ове", "ът", "ъл",
      "ъм", "еви", "ета", "ето"]))
GENERATED.append(
    ("czech", [""],
     ["měst", "žen", "muž", "hrad", "kost", "stroj", "píseň", "kuř", "dívk", "pán", "otc",
      "matk", "ruc", "noh", "večer", "ptáč", "kluk", "host", "pěst", "knih", "stůl", "dům"],
     ["", "atech", "ětem", "etem", "atům", "ech", "ich", "ích", "ého", "ěmi", "emi", "ému",
      "ěte", "ete", "ěti", "eti", "ího", "iho", "ími", "ímu", "imu", "ách", "ata", "aty", "ých",
      "ama", "ami", "ové", "ovi", "ými", "em", "es", "ém", "ím", "ům", "at", "ám", "os", "us",
      "ým", "mi", "ou", "a", "e", "i", "o", "u", "ů", "y", "á", "é", "í", "ý", "ě", "ov", "in",
      "ův", "ova", "ovo", "ina", "ův", "čt", "št", "c", "č", "z", "ž", "ec", "ek"]))
GENERATED.append(
    ("latvian", [""],
     ["māj", "gald", "zirg", "kok", "lāc", "akmen", "brāl", "dziesm", "ūden", "suņ", "kaķ",
      "brie", "zaķ", "pļav", "kakl", "mēnes", "upj", "ziv", "nakt", "virs", "liel", "jaun",
      "zaļ", "skaist", "kš", "ņņ", "šņ", "žņ", "šļ", "žļ", "ļņ", "ļļ", "kļ", "kņ", "lāč"],
     ["", "ajiem", "ajai", "ajam", "ajām", "ajos", "ajās", "iem", "ajā", "ais", "ai", "ei", "ām",
      "am", "ēm", "īm", "im", "um", "us", "as", "ās", "es", "os", "ij", "īs", "ēs", "is", "ie",
      "u", "a", "i", "e", "ā", "ē", "ī", "ū", "o", "s", "š"]))
for lang, prefixes, stems, suffixes in GENERATED:
    for p in prefixes:
        for s in stems:
            for x in suffixes:
                sys.stdout.write("%s\t%s\n" % (lang, p + s + x))

# The Greek stemmer: every Greek string of src/text/greek.c's rules (endings and exception
# stems) after a few stems, and every one of them followed by 8 endings drawn with a fixed
# seed, plus accented and capitalized forms for the lowercase filter.
import os
import random
import re

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "../../../src/text/greek.c"), encoding="utf-8") as f:
    greek = sorted(set(re.findall(r'"([\u0370-\u03ff]+)"', f.read())))
endings = [g for g in greek if len(g) <= 9]
rng = random.Random(14)
words = set()
for g in greek:
    for stem in ("", "καλ", "αγαπ", "τρ", "σπι", "κρε", "αρχ", "ον"):
        words.add(stem + g)
    for e in rng.sample(endings, 8):
        words.add(g + e)
for w in ("Άνθρωπος", "ΆΝΘΡΩΠΟΙ", "Ελληνικός", "ΐδιος", "ΰψος", "Ώρες", "θάλασσες", "Όμορφη"):
    words.add(w)
for w in sorted(words):
    sys.stdout.write("greek\t%s\n" % w)
