package org.example.versioned;

/** The version every plugin of this jar reports; the build writes it in place of the token. */
final class PluginVersion {
    static final String VERSION = "@VERSION@";

    private PluginVersion() {
    }
}
