package org.example.versioned;

import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.source.SourceConnector;

/** A source connector that writes nothing; it and its task report the version of their jar. */
public class VersionedSourceConnector extends SourceConnector {
    private Map<String, String> props = Collections.emptyMap();

    @Override
    public String version() {
        return PluginVersion.VERSION;
    }

    @Override
    public void start(Map<String, String> props) {
        this.props = new HashMap<>(props);
    }

    @Override
    public Class<? extends Task> taskClass() {
        return VersionedSourceTask.class;
    }

    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        return Collections.singletonList(props);
    }

    @Override
    public void stop() {
    }

    @Override
    public ConfigDef config() {
        return new ConfigDef();
    }
}
