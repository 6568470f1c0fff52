/** The package ships no types: families of samples as Prometheus's own Go parser returns them. */
declare module "parse-prometheus-text-format" {
  export default function parsePrometheusTextFormat(text: string): unknown[];
}
