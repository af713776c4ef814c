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
An image reference from an image value map (registry, repository, name, tag, tagPrefix,
digest), as Strimzi's chart builds it: <registry>/<repository>/<name>, empty parts taken from
.defaults (a map of registry, repository and tag; the parts that stay empty are left out),
then `:` and the tag, or `@` and the digest when one is given. The tag is the map's tag, or
else its tagPrefix (or the default tag) followed by .suffix.
Call with (dict "image" .Values.<x>.image "defaults" <map> "suffix" "<suffix or empty>").
*/}}
{{- define "strimzi-rs.image" -}}
{{- $path := compact (list (default .defaults.registry .image.registry) (default .defaults.repository .image.repository) .image.name) | join "/" -}}
{{- if .image.digest -}}
{{- printf "%s@%s" $path .image.digest -}}
{{- else if .image.tag -}}
{{- printf "%s:%s" $path (toString .image.tag) -}}
{{- else -}}
{{- printf "%s:%s%s" $path (default .defaults.tag .image.tagPrefix | toString) (default "" .suffix) -}}
{{- end -}}
{{- end -}}

{{/*
The image of one of this operator's own images (image, kafkaInit.image, topicOperator.image,
userOperator.image): empty parts from operatorImageDefaults, whose empty tag is the chart's
appVersion (the operator's version). Call with (dict "root" $ "image" .Values.<x>.image).
*/}}
{{- define "strimzi-rs.operatorImage" -}}
{{- $defaults := .root.Values.operatorImageDefaults -}}
{{- $tag := default .root.Chart.AppVersion $defaults.tag -}}
{{- include "strimzi-rs.image" (dict "image" .image "defaults" (dict "registry" $defaults.registry "repository" $defaults.repository "tag" $tag)) -}}
{{- end -}}

{{/*
The chart-wide defaults of the images Strimzi publishes (defaultImageRegistry,
defaultImageRepository, defaultImageTag), as a map for "strimzi-rs.image". Call with $.
*/}}
{{- define "strimzi-rs.strimziImageDefaults" -}}
{{- dict "registry" .Values.defaultImageRegistry "repository" .Values.defaultImageRepository "tag" .Values.defaultImageTag | toJson -}}
{{- end -}}

{{/*
One of Strimzi's published images that are not per Kafka version (kafkaBridge.image): empty
parts from the default* values. Call with (dict "root" $ "image" .Values.<x>.image).
*/}}
{{- define "strimzi-rs.strimziImage" -}}
{{- include "strimzi-rs.image" (dict "image" .image "defaults" (include "strimzi-rs.strimziImageDefaults" .root | fromJson)) -}}
{{- end -}}

{{/*
The Kafka versions the operator supports, in the order the image variables list them; the
last is the newest.
*/}}
{{- define "strimzi-rs.kafkaVersions" -}}
4.2.0 4.2.1 4.3.0 4.3.1
{{- end -}}

{{/*
One `<version>=<image>` line per supported Kafka version, the image named as
"strimzi-rs.image" names it with the suffix -kafka-<version>: call with (dict "root" $ "image"
.Values.<x>.image) for kafka.image, kafkaConnect.image or kafkaMirrorMaker2.image.
*/}}
{{- define "strimzi-rs.kafkaImages" -}}
{{- $defaults := include "strimzi-rs.strimziImageDefaults" .root | fromJson -}}
{{- range $index, $version := include "strimzi-rs.kafkaVersions" . | splitList " " -}}
{{- if $index }}{{ "\n" }}{{ end -}}
{{- printf "%s=%s" $version (include "strimzi-rs.image" (dict "image" $.image "defaults" $defaults "suffix" (printf "-kafka-%s" $version))) -}}
{{- end -}}
{{- end -}}

{{/*
The image of Kafka Exporter or Cruise Control, a Kafka image of the newest supported version,
when one of its values differs from the chart's (an empty registry, repository, tag,
tagPrefix and digest, name kafka); nothing otherwise, so that the operator runs the cluster's
own Kafka image. Call with (dict "root" $ "image" .Values.<x>.image).
*/}}
{{- define "strimzi-rs.kafkaComponentImage" -}}
{{- $image := .image -}}
{{- if or $image.registry $image.repository $image.tag $image.tagPrefix $image.digest (ne (toString $image.name) "kafka") -}}
{{- $newest := include "strimzi-rs.kafkaVersions" . | splitList " " | last -}}
{{- include "strimzi-rs.image" (dict "image" $image "defaults" (include "strimzi-rs.strimziImageDefaults" .root | fromJson) "suffix" (printf "-kafka-%s" $newest)) -}}
{{- end -}}
{{- end -}}

{{/*
The operator's log level: logLevel, or the default of Strimzi's log4j expression
`${env:STRIMZI_LOG_LEVEL:-<level>}` (the default of Strimzi's chart), which the operator
would refuse.
*/}}
{{- define "strimzi-rs.logLevel" -}}
{{- regexReplaceAll "^\\$\\{env:STRIMZI_LOG_LEVEL:-([A-Za-z]+)\\}$" (toString .Values.logLevel) "${1}" -}}
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
