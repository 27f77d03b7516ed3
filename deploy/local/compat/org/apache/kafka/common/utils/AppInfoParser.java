package org.apache.kafka.common.utils;

/**
 * The FileStream connectors (connect-file) read their version from this class, which Kafka 4.4 moved to
 * {@code org.apache.kafka.common.utils.internals}. connect-file 4.4.0 is not on Maven Central, so the 4.4
 * stack runs connect-file 4.3.1 with this class beside it in its plugin directory: the connectors then
 * report the worker's own version, as a connect-file of the worker's release does.
 */
public final class AppInfoParser {
    private AppInfoParser() {
    }

    public static String getVersion() {
        return org.apache.kafka.common.utils.internals.AppInfoParser.getVersion();
    }

    public static String getCommitId() {
        return org.apache.kafka.common.utils.internals.AppInfoParser.getCommitId();
    }
}
