import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.connect.runtime.isolation.PluginUtils;
import org.apache.maven.artifact.versioning.ArtifactVersion;
import org.apache.maven.artifact.versioning.ComparableVersion;
import org.apache.maven.artifact.versioning.DefaultArtifactVersion;
import org.apache.maven.artifact.versioning.InvalidVersionSpecificationException;
import org.apache.maven.artifact.versioning.VersionRange;

/**
 * The Java answers that tests/unit/rules/test_maven_version_java.py holds control_plane.rules.maven_version to,
 * from maven-artifact and connect-runtime themselves. One JVM for a whole batch: reads UTF-8 lines from stdin,
 * fields separated by tabs, each field escaped (backslash, tab, newline, carriage return as \\ \t \n \r):
 *
 *   V  version                   a version: its index is the count of V lines before it
 *   C                            prints "C" and every version's canonical form (getCanonical)
 *   R  window  i,j,k,...         prints "R" and one char per pair (list[k], list[k + d]) for d = 1..window, k in
 *                                order: compareTo's sign as <, = or >, or '!' where equals() disagrees with
 *                                compareTo() == 0 (no sorting: ComparableVersion is no total order on odd strings,
 *                                TimSort rejects it); a window as long as the list gives all pairs
 *   P  i  j                      prints "P" and compareTo(i, j) as -1/0/1 and equals(i, j) as 0/1
 *   S  spec  +|-  i,j,k          a spec ("-": a null spec, the spec field ignored) and the sample's version indices:
 *                                prints Maven's createFromVersionSpec then Connect's connectorVersionRequirement:
 *                                each either "ERR message", "NULL", or "OK toString hasRestrictions recommended
 *                                contains matched" where contains is one 0/1 per sample and matched the index
 *                                matchVersion picks (-1 for none)
 */
public final class MavenVersionOracle {
    private MavenVersionOracle() {
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintWriter out = new PrintWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), false);
        List<String> versions = new ArrayList<>();
        List<ComparableVersion> comparables = new ArrayList<>();
        String line;
        while ((line = in.readLine()) != null) {
            String[] fields = line.split("\t", -1);
            switch (fields[0]) {
                case "V":
                    String version = unescape(fields[1]);
                    versions.add(version);
                    comparables.add(new ComparableVersion(version));
                    break;
                case "C":
                    StringBuilder canonical = new StringBuilder("C");
                    for (ComparableVersion comparable : comparables) {
                        canonical.append('\t').append(escape(comparable.getCanonical()));
                    }
                    out.println(canonical);
                    break;
                case "R":
                    printRelations(out, comparables, Integer.parseInt(fields[1]), fields[2]);
                    break;
                case "P":
                    ComparableVersion left = comparables.get(Integer.parseInt(fields[1]));
                    ComparableVersion right = comparables.get(Integer.parseInt(fields[2]));
                    out.println("P\t" + Integer.signum(left.compareTo(right)) + "\t" + (left.equals(right) ? 1 : 0));
                    break;
                case "S":
                    String spec = fields[2].equals("-") ? null : unescape(fields[1]);
                    List<Integer> sample = new ArrayList<>();
                    if (!fields[3].isEmpty()) {
                        for (String index : fields[3].split(",")) {
                            sample.add(Integer.parseInt(index));
                        }
                    }
                    String maven;
                    try {
                        maven = describe(VersionRange.createFromVersionSpec(spec), versions, sample);
                    } catch (InvalidVersionSpecificationException e) {
                        maven = "ERR\t" + escape(e.getMessage());
                    }
                    String connect;
                    try {
                        connect = describe(PluginUtils.connectorVersionRequirement(spec), versions, sample);
                    } catch (InvalidVersionSpecificationException e) {
                        connect = "ERR\t" + escape(e.getMessage());
                    }
                    out.println("S\t" + maven + "\t" + connect);
                    break;
                default:
                    throw new IllegalArgumentException("unknown command: " + fields[0]);
            }
        }
        out.flush();
    }

    private static void printRelations(PrintWriter out, List<ComparableVersion> comparables, int window, String list) {
        List<ComparableVersion> items = new ArrayList<>();
        for (String index : list.split(",")) {
            items.add(comparables.get(Integer.parseInt(index)));
        }
        StringBuilder relations = new StringBuilder("R\t");
        for (int k = 0; k < items.size(); k++) {
            for (int d = 1; d <= window && k + d < items.size(); d++) {
                ComparableVersion here = items.get(k);
                ComparableVersion there = items.get(k + d);
                int relation = Integer.signum(here.compareTo(there));
                relations.append((relation == 0) != here.equals(there) ? '!' : relation < 0 ? '<' : relation == 0 ? '=' : '>');
            }
        }
        out.println(relations);
    }

    private static String describe(VersionRange range, List<String> versions, List<Integer> sample) {
        if (range == null) {
            return "NULL";
        }
        StringBuilder contains = new StringBuilder();
        List<ArtifactVersion> candidates = new ArrayList<>();
        for (int index : sample) {
            DefaultArtifactVersion candidate = new DefaultArtifactVersion(versions.get(index));
            candidates.add(candidate);
            contains.append(range.containsVersion(candidate) ? '1' : '0');
        }
        ArtifactVersion matched = range.matchVersion(candidates);
        int matchedIndex = -1;
        for (int k = 0; k < candidates.size(); k++) {
            if (candidates.get(k) == matched) {
                matchedIndex = sample.get(k);
                break;
            }
        }
        ArtifactVersion recommended = range.getRecommendedVersion();
        return "OK\t" + escape(range.toString()) + "\t" + (range.hasRestrictions() ? 1 : 0) + "\t"
                + (recommended == null ? "-" : "=" + escape(recommended.toString())) + "\t" + contains + "\t" + matchedIndex;
    }

    private static String escape(String text) {
        StringBuilder escaped = new StringBuilder();
        for (char c : text.toCharArray()) {
            switch (c) {
                case '\\': escaped.append("\\\\"); break;
                case '\t': escaped.append("\\t"); break;
                case '\n': escaped.append("\\n"); break;
                case '\r': escaped.append("\\r"); break;
                default: escaped.append(c);
            }
        }
        return escaped.toString();
    }

    private static String unescape(String text) {
        StringBuilder plain = new StringBuilder();
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\\' && i + 1 < text.length()) {
                char next = text.charAt(++i);
                plain.append(next == 't' ? '\t' : next == 'n' ? '\n' : next == 'r' ? '\r' : next);
            } else {
                plain.append(c);
            }
        }
        return plain.toString();
    }
}
