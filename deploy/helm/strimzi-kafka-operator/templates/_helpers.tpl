{{/*
Labels of every object: the bundle's `app: strimzi`, plus the chart, component, release and
heritage labels Strimzi's chart adds. Call with (dict "root" $ "component" "<what>").
*/}}
{{- define "strimzi-rs.labels" -}}
app: strimzi
chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
component: {{ .component }}
release: {{ .root.Release.Name }}
heritage: {{ .root.Release.Service }}
{{- end -}}

{{/*
An image reference from an image value map (registry, repository, name, tag, digest), each
empty part taken from the chart-wide defaults. A digest, when given, replaces the tag.
Call with (dict "root" $ "image" .Values.<x>.image).
*/}}
{{- define "strimzi-rs.image" -}}
{{- $values := .root.Values -}}
{{- $path := compact (list (default $values.defaultImageRegistry .image.registry) (default $values.defaultImageRepository .image.repository) .image.name) | join "/" -}}
{{- if .image.digest -}}
{{- printf "%s@%s" $path .image.digest -}}
{{- else -}}
{{- printf "%s:%s" $path (default $values.defaultImageTag .image.tag | toString) -}}
{{- end -}}
{{- end -}}

{{/*
The Kafka versions the operator supports, in the order the image variables list them.
*/}}
{{- define "strimzi-rs.kafkaVersions" -}}
4.2.0 4.2.1 4.3.0 4.3.1
{{- end -}}

{{/*
One `<version>=<image>` line per supported Kafka version, the image being
<registry>/<repository>/<name>:<tagPrefix>-kafka-<version>: call with an image map of values
(kafka.image, kafkaConnect.image, kafkaMirrorMaker2.image).
*/}}
{{- define "strimzi-rs.kafkaImages" -}}
{{- $path := compact (list .registry .repository .name) | join "/" -}}
{{- $tagPrefix := toString .tagPrefix -}}
{{- range $index, $version := include "strimzi-rs.kafkaVersions" . | splitList " " -}}
{{- if $index }}{{ "\n" }}{{ end -}}
{{- printf "%s=%s:%s-kafka-%s" $version $path $tagPrefix $version -}}
{{- end -}}
{{- end -}}

{{/*
Names of the image pull Secrets, comma-separated: image.imagePullSecrets may be one name, a
comma-separated string, or a list of names or of {name: ...} maps.
*/}}
{{- define "strimzi-rs.pullSecretNames" -}}
{{- $secrets := .Values.image.imagePullSecrets -}}
{{- $names := list -}}
{{- if kindIs "string" $secrets -}}
{{- range splitList "," $secrets -}}
{{- $names = append $names (trim .) -}}
{{- end -}}
{{- else if kindIs "slice" $secrets -}}
{{- range $secrets -}}
{{- if kindIs "map" . -}}
{{- $names = append $names .name -}}
{{- else -}}
{{- $names = append $names (toString .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- compact $names | join "," -}}
{{- end -}}

{{/*
Namespaces that get the operator's RoleBindings: watchNamespaces, then the release
namespace, without repeats.
*/}}
{{- define "strimzi-rs.watchedNamespaces" -}}
{{- append (.Values.watchNamespaces | default list) .Release.Namespace | uniq | join "," -}}
{{- end -}}
