// Oracle for scry's text analysis: prints what Lucene 8.7's analyzers make of each input line,
// with positions and UTF-8 byte offsets, so tests/unit/text can compare our analyzers exactly.
// Usage: java -cp lucene-core.jar:lucene-analyzers-common.jar:. LuceneTokens tokens <lines.txt>
//        java ... LuceneTokens porter <words.txt>     (word \t Lucene PorterStemFilter stem)
//        java ... LuceneTokens fold <chars.txt>       (line \t Lucene ASCIIFoldingFilter output)
//        java ... LuceneTokens snowball <words.txt>   (word \t SnowballFilter(English) stem)
// Output (tokens mode), one line per token:
//   <line number>\t<analyzer>\t<position>\t<start byte>\t<end byte>\t<type>\t<escaped term>
// and one line "<line number>\t<analyzer>\t-" when a line gives no tokens for that analyzer.
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import org.apache.lucene.analysis.*;
import org.apache.lucene.analysis.core.*;
import org.apache.lucene.analysis.en.*;
import org.apache.lucene.analysis.standard.*;
import org.apache.lucene.analysis.tokenattributes.*;

public class LuceneTokens {
    static String escape(String s) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\') b.append("\\\\");
            else if (c == '\t') b.append("\\t");
            else if (c == '\n') b.append("\\n");
            else if (c == '\r') b.append("\\r");
            else if (c < 0x20 || c == 0x7f) b.append(String.format("\\x%02x", (int) c));
            else b.append(c);
        }
        return b.toString();
    }

    // byteAt[i] = UTF-8 byte offset of UTF-16 index i (i in 0..len).
    static int[] utf8Offsets(String s) {
        int[] off = new int[s.length() + 1];
        int b = 0;
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            int n = Character.charCount(cp);
            int bytes = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
            if (n == 1 && Character.isSurrogate(s.charAt(i))) bytes = 3; // lone surrogate -> U+FFFD
            off[i] = b;
            if (n == 2) off[i + 1] = b + 2; // never a token boundary in practice
            b += bytes;
            i += n;
        }
        off[s.length()] = b;
        return off;
    }

    static void analyze(PrintStream out, int lineNo, String name, Analyzer a, String text)
            throws IOException {
        int[] off = utf8Offsets(text);
        int n = 0, pos = -1;
        try (TokenStream ts = a.tokenStream("f", text)) {
            CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
            PositionIncrementAttribute inc = ts.addAttribute(PositionIncrementAttribute.class);
            OffsetAttribute o = ts.addAttribute(OffsetAttribute.class);
            TypeAttribute type = ts.addAttribute(TypeAttribute.class);
            ts.reset();
            while (ts.incrementToken()) {
                pos += inc.getPositionIncrement();
                out.println(lineNo + "\t" + name + "\t" + pos + "\t" + off[o.startOffset()] + "\t"
                        + off[o.endOffset()] + "\t" + type.type() + "\t" + escape(term.toString()));
                n++;
            }
            ts.end();
        }
        if (n == 0) out.println(lineNo + "\t" + name + "\t-");
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "UTF-8");
        List<String> lines = Files.readAllLines(Paths.get(args[1]), StandardCharsets.UTF_8);
        if (args[0].equals("fold")) {
            for (String w : lines) {
                Tokenizer t = new KeywordTokenizer();
                t.setReader(new StringReader(w));
                try (TokenStream ts = new org.apache.lucene.analysis.miscellaneous.ASCIIFoldingFilter(t)) {
                    CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
                    ts.reset();
                    while (ts.incrementToken()) out.println(escape(w) + "\t" + escape(term.toString()));
                    ts.end();
                }
            }
            out.flush();
            return;
        }
        if (args[0].equals("snowball")) {
            for (String w : lines) {
                if (w.isEmpty()) continue;
                Tokenizer t = new KeywordTokenizer();
                t.setReader(new StringReader(w));
                try (TokenStream ts = new org.apache.lucene.analysis.snowball.SnowballFilter(t,
                        new org.tartarus.snowball.ext.EnglishStemmer())) {
                    CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
                    ts.reset();
                    while (ts.incrementToken()) out.println(w + "\t" + term.toString());
                    ts.end();
                }
            }
            out.flush();
            return;
        }
        if (args[0].equals("porter")) {
            for (String w : lines) {
                if (w.isEmpty()) continue;
                Tokenizer t = new KeywordTokenizer();
                t.setReader(new StringReader(w));
                try (TokenStream ts = new PorterStemFilter(t)) {
                    CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
                    ts.reset();
                    while (ts.incrementToken()) out.println(w + "\t" + term.toString());
                    ts.end();
                }
            }
            out.flush();
            return;
        }
        String[] names = {"standard", "simple", "whitespace", "keyword", "stop", "english"};
        Analyzer[] as = {new StandardAnalyzer(CharArraySet.EMPTY_SET), new SimpleAnalyzer(),
                new WhitespaceAnalyzer(), new KeywordAnalyzer(),
                new StopAnalyzer(EnglishAnalyzer.ENGLISH_STOP_WORDS_SET), new EnglishAnalyzer()};
        int lineNo = 0;
        for (String line : lines) {
            lineNo++;
            for (int i = 0; i < names.length; i++) analyze(out, lineNo, names[i], as[i], line);
        }
        out.flush();
    }
}
