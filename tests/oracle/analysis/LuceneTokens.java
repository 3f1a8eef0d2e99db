// Oracle for scry's text analysis: prints what Lucene 8.7's analyzers make of each input line,
// with positions and UTF-8 byte offsets, so tests/unit/text can compare our analyzers exactly.
// Usage: java -cp lucene-core.jar:lucene-analyzers-common.jar:. LuceneTokens tokens <lines.txt>
//        java ... LuceneTokens porter <words.txt>     (word \t Lucene PorterStemFilter stem)
//        java ... LuceneTokens fold <chars.txt>       (line \t Lucene ASCIIFoldingFilter output)
//        java ... LuceneTokens snowball <words.txt>   (word \t SnowballFilter(English) stem)
//        java ... LuceneTokens light <light_words.txt>  (language \t word \t what Lucene's
//                 language analyzer, without stop words, makes of the word)
//        java ... LuceneTokens chains <chains.tsv> <lines.txt>  (every chain of chains.tsv over
//                 every line, built from Lucene's factories; the chain name is the analyzer)
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
            PositionLengthAttribute len = ts.addAttribute(PositionLengthAttribute.class);
            ts.reset();
            while (ts.incrementToken()) {
                pos += inc.getPositionIncrement();
                // the position length only when it is not 1 (a token spanning several positions)
                int pl = len.getPositionLength();
                out.println(lineNo + "\t" + name + "\t" + pos + "\t" + off[o.startOffset()] + "\t"
                        + off[o.endOffset()] + "\t" + type.type() + "\t" + escape(term.toString())
                        + (pl != 1 ? "\t" + pl : ""));
                n++;
            }
            ts.end();
        }
        if (n == 0) out.println(lineNo + "\t" + name + "\t-");
    }

    // Elasticsearch's token_chars for the n-gram tokenizers (CharMatcher in ES).
    static boolean tokenChar(String classes, int c) {
        if (classes == null) return true;
        int t = Character.getType(c);
        for (String k : classes.split(";")) {
            if (k.equals("letter") && Character.isLetter(c)) return true;
            if (k.equals("digit") && Character.isDigit(c)) return true;
            if (k.equals("whitespace") && Character.isWhitespace(c)) return true;
            if (k.equals("punctuation") && (t == Character.CONNECTOR_PUNCTUATION
                    || t == Character.DASH_PUNCTUATION || t == Character.START_PUNCTUATION
                    || t == Character.END_PUNCTUATION || t == Character.INITIAL_QUOTE_PUNCTUATION
                    || t == Character.FINAL_QUOTE_PUNCTUATION || t == Character.OTHER_PUNCTUATION))
                return true;
            if (k.equals("symbol") && (t == Character.MATH_SYMBOL || t == Character.CURRENCY_SYMBOL
                    || t == Character.MODIFIER_SYMBOL || t == Character.OTHER_SYMBOL))
                return true;
        }
        return false;
    }

    // "name(k=v,k=v)" -> name and a mutable parameter map; "@a;;b" values become files.
    static String specName(String s) {
        int p = s.indexOf('(');
        return p < 0 ? s : s.substring(0, p);
    }

    static Map<String, String> specArgs(String s, File dir) throws IOException {
        Map<String, String> m = new HashMap<>();
        int p = s.indexOf('(');
        if (p < 0) return m;
        String body = s.substring(p + 1, s.length() - 1);
        // split on commas that start a new k= (values may hold commas inside @files)
        List<String> parts = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < body.length(); i++) {
            if (body.charAt(i) == ',' && body.substring(i + 1).matches("^[A-Za-z]+=.*")) {
                if (!body.substring(start).startsWith("synonyms=@") && !body.substring(start).startsWith("mapping=@")
                        && !body.substring(start).startsWith("protected=@") || i + 1 >= body.length()
                        || body.substring(i + 1).matches("^(synonyms|expand|mapping|protected)=.*")) {
                    parts.add(body.substring(start, i));
                    start = i + 1;
                }
            }
        }
        parts.add(body.substring(start));
        int nfile = 0;
        for (String kv : parts) {
            int e = kv.indexOf('=');
            String k = kv.substring(0, e), v = kv.substring(e + 1);
            if (v.startsWith("@")) {
                File f = new File(dir, "res" + (nfile++) + "_" + k + ".txt");
                try (Writer w = new OutputStreamWriter(new FileOutputStream(f), StandardCharsets.UTF_8)) {
                    for (String line : v.substring(1).split(";;", -1)) w.write(line + "\n");
                }
                v = f.getName();
            }
            m.put(k, v);
        }
        return m;
    }

    static Analyzer chain(String spec, File dir) throws IOException {
        final List<org.apache.lucene.analysis.util.CharFilterFactory> cfs = new ArrayList<>();
        final List<org.apache.lucene.analysis.util.TokenFilterFactory> fs = new ArrayList<>();
        org.apache.lucene.analysis.util.TokenizerFactory tf = null;
        String ngram = null, tokenChars = null;
        int minG = 0, maxG = 0;
        org.apache.lucene.analysis.util.ResourceLoader rl =
                new org.apache.lucene.analysis.util.FilesystemResourceLoader(dir.toPath(), LuceneTokens.class.getClassLoader());
        for (String part : spec.split("\\|")) {
            String kind = part.substring(0, part.indexOf(':'));
            String rest = part.substring(part.indexOf(':') + 1);
            String name = specName(rest);
            Map<String, String> args = specArgs(rest, dir);
            if (kind.equals("tok") && (name.equals("nGram") || name.equals("edgeNGram"))) {
                ngram = name;
                tokenChars = args.get("tokenChars");
                minG = Integer.parseInt(args.get("minGramSize"));
                maxG = Integer.parseInt(args.get("maxGramSize"));
                continue;
            }
            Object f;
            if (kind.equals("cf")) f = org.apache.lucene.analysis.util.CharFilterFactory.forName(name, args);
            else if (kind.equals("tok")) f = org.apache.lucene.analysis.util.TokenizerFactory.forName(name, args);
            else f = org.apache.lucene.analysis.util.TokenFilterFactory.forName(name, args);
            if (f instanceof org.apache.lucene.analysis.util.ResourceLoaderAware)
                ((org.apache.lucene.analysis.util.ResourceLoaderAware) f).inform(rl);
            if (kind.equals("cf")) cfs.add((org.apache.lucene.analysis.util.CharFilterFactory) f);
            else if (kind.equals("tok")) tf = (org.apache.lucene.analysis.util.TokenizerFactory) f;
            else fs.add((org.apache.lucene.analysis.util.TokenFilterFactory) f);
        }
        final org.apache.lucene.analysis.util.TokenizerFactory tff = tf;
        final String ng = ngram, tc = tokenChars;
        final int mn = minG, mx = maxG;
        return new Analyzer() {
            @Override
            protected Reader initReader(String field, Reader r) {
                for (org.apache.lucene.analysis.util.CharFilterFactory c : cfs) r = c.create(r);
                return r;
            }

            @Override
            protected TokenStreamComponents createComponents(String field) {
                Tokenizer t;
                if (ng == null) t = tff.create();
                else if (ng.equals("nGram"))
                    t = new org.apache.lucene.analysis.ngram.NGramTokenizer(mn, mx) {
                        @Override
                        protected boolean isTokenChar(int c) { return tokenChar(tc, c); }
                    };
                else
                    t = new org.apache.lucene.analysis.ngram.EdgeNGramTokenizer(mn, mx) {
                        @Override
                        protected boolean isTokenChar(int c) { return tokenChar(tc, c); }
                    };
                TokenStream ts = t;
                for (org.apache.lucene.analysis.util.TokenFilterFactory f : fs) ts = f.create(ts);
                return new TokenStreamComponents(t, ts);
            }
        };
    }

    // "analyzer:<class>(stemExclusion=a;b)": one of Lucene's own analyzers (the language
    // analyzers Elasticsearch builds), with its default stop words.
    static Analyzer analyzer(String spec) throws Exception {
        String cls = specName(spec);
        Class<?> c = Class.forName(cls);
        int p = spec.indexOf("stemExclusion=");
        if (p < 0) return (Analyzer) c.getConstructor().newInstance();
        String v = spec.substring(p + "stemExclusion=".length(), spec.length() - 1);
        org.apache.lucene.analysis.CharArraySet ex =
                new org.apache.lucene.analysis.CharArraySet(Arrays.asList(v.split(";")), false);
        Object stop = c.getMethod("getDefaultStopSet").invoke(null);
        return (Analyzer) c.getConstructor(org.apache.lucene.analysis.CharArraySet.class,
                org.apache.lucene.analysis.CharArraySet.class).newInstance(stop, ex);
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "UTF-8");
        if (args[0].equals("chains")) {
            List<String> specs = Files.readAllLines(Paths.get(args[1]), StandardCharsets.UTF_8);
            List<String> lines = Files.readAllLines(Paths.get(args[2]), StandardCharsets.UTF_8);
            File dir = Files.createTempDirectory("chains").toFile();
            for (String spec : specs) {
                if (spec.startsWith("#") || spec.isEmpty()) continue;
                String[] cols = spec.split("\t");
                Analyzer a = cols[2].startsWith("analyzer:") ? analyzer(cols[2].substring(9))
                                                             : chain(cols[2], dir);
                int lineNo = 0;
                for (String line : lines) analyze(out, ++lineNo, cols[0], a, line);
            }
            out.flush();
            return;
        }
        List<String> lines = Files.readAllLines(Paths.get(args[1]), StandardCharsets.UTF_8);
        if (args[0].equals("light")) {
            Map<String, Analyzer> byLang = new HashMap<>();
            String[][] classes = {{"german", "org.apache.lucene.analysis.de.GermanAnalyzer"},
                    {"french", "org.apache.lucene.analysis.fr.FrenchAnalyzer"},
                    {"spanish", "org.apache.lucene.analysis.es.SpanishAnalyzer"},
                    {"italian", "org.apache.lucene.analysis.it.ItalianAnalyzer"},
                    {"portuguese", "org.apache.lucene.analysis.pt.PortugueseAnalyzer"},
                    {"arabic", "org.apache.lucene.analysis.ar.ArabicAnalyzer"},
                    {"hindi", "org.apache.lucene.analysis.hi.HindiAnalyzer"},
                    {"indonesian", "org.apache.lucene.analysis.id.IndonesianAnalyzer"},
                    {"greek", "org.apache.lucene.analysis.el.GreekAnalyzer"},
                    {"bulgarian", "org.apache.lucene.analysis.bg.BulgarianAnalyzer"},
                    {"czech", "org.apache.lucene.analysis.cz.CzechAnalyzer"},
                    {"latvian", "org.apache.lucene.analysis.lv.LatvianAnalyzer"}};
            for (String[] c : classes)
                byLang.put(c[0], (Analyzer) Class.forName(c[1])
                        .getConstructor(CharArraySet.class).newInstance(CharArraySet.EMPTY_SET));
            for (String line : lines) {
                String[] f = line.split("\t");
                StringBuilder b = new StringBuilder();
                try (TokenStream ts = byLang.get(f[0]).tokenStream("f", f[1])) {
                    CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
                    ts.reset();
                    while (ts.incrementToken()) b.append(b.length() > 0 ? " " : "").append(term);
                    ts.end();
                }
                out.println(f[0] + "\t" + f[1] + "\t" + b);
            }
            out.flush();
            return;
        }
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
