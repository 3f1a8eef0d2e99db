#!/usr/bin/env python3
"""Random inputs for the html_strip and word-delimiter chains of the analysis oracle: lines
glued from fragments that exercise every construct of Lucene's HTMLStripCharFilter (tags,
comments, CDATA, declarations, entities, event attributes, script/style) and of its
WordDelimiter(Graph)Filter (case changes, digits, possessives, delimiters, non-Latin letters).
Usage: make_random_markup.py SEED LINES   (half HTML lines, half word-delimiter lines)"""
import random
import sys

HTML = ['<', '>', '</', '/', '<!--', '-->', '<!', '<?', '?>', '&', '&amp;', '&amp', '&#', '&#x',
        '&#65;', '&#x41;', '&lt', '&gt;', '&nbsp;', '&eacute;', '&notin;', '&sup2', '&#xD83D;',
        '&#xDE00;', '&#55357;', '&#56832;', '&#xdbff;&#xdfff;', '&#9999999;', '&#x10FFFF;',
        '&#x110000;', ';', 'p', 'b', 'br', 'script', 'style', 'div', 'span', 'a', 'em', 'x', 'y',
        'abc', 'Foo', '  ', ' ', '\t', '=', '"', "'", '\\"', "\\'", 'onclick', 'onclick="a>b"',
        "onload='<'", "onClick = 'x'", 'class=x', '<![CDATA[', '[CDATA[', ']]>',
        '<!--#include "x" -->', '<!--#', '\u00e9', '\U0001F600', '\u65e5\u672c', '1', '23', '-',
        '.', ':', '_', '<p>', '</p>', '<b>', '</b>', '<br/>', '<br', '<script>', '</script>',
        '<style>', '</style>', '< p>', '</ b >', '<SCRIPT>', '<custom-tag>', '<!DOCTYPE html>',
        '<?xml ?>', '<a href="x">', '</a>', '<img src=x/>', '<input/>']
WORD = ['a', 'B', 'cd', 'EF', 'Gh', 'iJ', '1', '23', '4', '-', '_', '.', "'", "'s", "'S", '&',
        '/', '\u00c9', '\u00e9', '\u00df', '\u65e5', '\U0001F600', 'x2', 'SD', '500', 'Wi', 'Fi',
        'O', 'Neil', '---', ',', '$', '%', '\u01c5', '\u00b2', '\u0663']

seed, n = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(seed)
for i in range(n):
    if i % 2 == 0:
        print(''.join(rng.choice(HTML) for _ in range(rng.randint(1, 16))))
    else:
        print(' '.join(''.join(rng.choice(WORD) for _ in range(rng.randint(1, 7)))
                       for _ in range(rng.randint(1, 6))))
