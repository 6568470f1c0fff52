export function serverNodeFlags(nodeOptions?: string): string[];
export function serverArgs(port: number | string, host: string, nodeOptions?: string): string[];
