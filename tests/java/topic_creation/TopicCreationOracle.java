import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.connect.runtime.SourceConnectorConfig;
import org.apache.kafka.connect.util.TopicCreationGroup;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.PatternSyntaxException;

/**
 * The oracle of the sidecar's differential test of KIP-158 topic creation: one JVM reads JSON lines
 * {"id", "config": {...}, "topics": [...]} on stdin and, for each, builds Connect's own
 * SourceConnectorConfig (createTopics=true) and TopicCreationGroup.configuredGroups, then resolves each
 * topic the way TopicCreation.findFirstGroup does (listed groups in order without "default", first
 * whose matches(topic) is true, else "default"). It writes one JSON line per case: the claiming group
 * and NewTopic settings per topic, or the exception Connect throws. A line {"id", "pattern", "texts"}
 * is one bare pattern: Pattern.compile and matches() per text, or the PatternSyntaxException.
 */
public final class TopicCreationOracle {
    public static void main(String[] args) throws Exception {
        ObjectMapper json = new ObjectMapper();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            JsonNode request = json.readTree(line);
            ObjectNode reply = json.createObjectNode();
            reply.put("id", request.get("id").asInt());
            if (request.has("pattern")) {
                out.println(json.writeValueAsString(pattern(request, reply)));
                continue;
            }
            Map<String, String> props = new HashMap<>();
            props.put("name", "oracle");
            props.put("connector.class", "org.example.Source");
            Iterator<Map.Entry<String, JsonNode>> fields = request.get("config").properties().iterator();
            while (fields.hasNext()) {
                Map.Entry<String, JsonNode> field = fields.next();
                props.put(field.getKey(), field.getValue().asText());
            }
            try {
                SourceConnectorConfig config = new SourceConnectorConfig(null, props, true);
                Map<String, TopicCreationGroup> groups = TopicCreationGroup.configuredGroups(config);
                TopicCreationGroup defaultGroup = groups.get("default");
                if (defaultGroup == null) {
                    reply.put("off", true);  // no topic.creation.* key: Connect creates no topic
                    out.println(json.writeValueAsString(reply));
                    continue;
                }
                ArrayNode claims = reply.putArray("claims");
                for (JsonNode topicNode : request.get("topics")) {
                    String topic = topicNode.asText();
                    TopicCreationGroup claiming = defaultGroup;
                    for (TopicCreationGroup group : groups.values()) {
                        if (!group.name().equals("default") && group.matches(topic)) {
                            claiming = group;
                            break;
                        }
                    }
                    ObjectNode claim = claims.addObject();
                    claim.put("group", claiming.name());
                    NewTopic created = claiming.newTopic(topic);
                    claim.put("partitions", created.numPartitions());
                    claim.put("replication_factor", (int) created.replicationFactor());
                    ObjectNode configs = claim.putObject("configs");
                    Map<String, String> sorted = new TreeMap<>(created.configs() == null ? Map.of() : created.configs());
                    sorted.forEach(configs::put);
                }
            } catch (ConfigException | PatternSyntaxException e) {
                reply.remove("claims");
                reply.put("error", e.getClass().getSimpleName());
                reply.put("message", e.getMessage());
            }
            out.println(json.writeValueAsString(reply));
        }
        out.flush();
    }

    /** One java.util.regex pattern: Pattern.compile, then matcher(text).matches() per text. */
    private static ObjectNode pattern(JsonNode request, ObjectNode reply) {
        try {
            java.util.regex.Pattern compiled = java.util.regex.Pattern.compile(request.get("pattern").asText());
            ArrayNode matches = reply.putArray("matches");
            for (JsonNode text : request.get("texts")) {
                matches.add(compiled.matcher(text.asText()).matches());
            }
        } catch (PatternSyntaxException e) {
            reply.put("error", e.getDescription());
            reply.put("index", e.getIndex());
        }
        return reply;
    }
}
