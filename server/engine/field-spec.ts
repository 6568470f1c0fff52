/**
 * Field specs: the plain-data description of one configurable value (an enum, a flag, a bounded
 * number, a list of names, a severity list) and everything derived from it — its TypeScript value
 * type, its zod schema and the sentence that says what it accepts. The registry
 * (server/engine/registry.ts) describes every setting and rule field with these. Pure.
 */
import { z } from "zod";
import { SEVERITIES, type Severity } from "./vocabulary";

export type FieldSpec =
  | { readonly kind: "enum"; readonly values: readonly [string, ...string[]] }
  | { readonly kind: "bool" }
  | {
      readonly kind: "number";
      readonly int: boolean;
      readonly min: number;
      /** true: the value must be greater than `min` (not equal). */
      readonly minExclusive?: boolean;
      readonly max?: number;
      /** true: `null` is a value too ("none", e.g. no budget). */
      readonly nullable?: boolean;
    }
  | {
      readonly kind: "names";
      /** What the entries are, plural ("model names"). */
      readonly noun: string;
      readonly maxLength: number;
      readonly maxItems?: number;
    }
  | { readonly kind: "severities" };

export type NumberSpec = Extract<FieldSpec, { kind: "number" }>;

/** The TypeScript type of a field's value. */
export type ValueOf<S extends FieldSpec> = S extends { kind: "enum"; values: readonly (infer V)[] }
  ? V
  : S extends { kind: "bool" }
    ? boolean
    : S extends { kind: "number"; nullable: true }
      ? number | null
      : S extends { kind: "number" }
      ? number
      : S extends { kind: "names" }
        ? string[]
        : S extends { kind: "severities" }
          ? Severity[]
          : never;

/** What a number field accepts, as the end of "must be …". */
function numberRequirement(spec: NumberSpec): string {
  const lower = spec.minExclusive ? `greater than ${spec.min}` : `at least ${spec.min}`;
  if (spec.int) {
    if (spec.max !== undefined && !spec.minExclusive) return `a whole number from ${spec.min} to ${spec.max}`;
    return `a whole number ${spec.minExclusive ? lower : `of ${lower}`}${spec.max !== undefined ? ` and at most ${spec.max}` : ""}`;
  }
  if (spec.max !== undefined && !spec.minExclusive) return `between ${spec.min} and ${spec.max}`;
  return `${lower}${spec.max !== undefined ? ` and at most ${spec.max}` : ""}`;
}

/**
 * The zod schema of a field. `subject` names the value in messages ("nudgeLevel must be one of …",
 * camelCase API); without it messages start with "must be …" and the caller prefixes the path
 * (the snake_case document names every issue by its path).
 */
export function fieldSchema<S extends FieldSpec>(spec: S, subject?: string): z.ZodType<ValueOf<S>> {
  const say = (rest: string) => (subject ? `${subject} ${rest}` : rest);
  const s = spec as FieldSpec;
  switch (s.kind) {
    case "enum":
      return z.enum(s.values, { error: say(`must be one of ${s.values.join(", ")}`) }) as unknown as z.ZodType<ValueOf<S>>;
    case "bool":
      return z.boolean({ error: say("must be true or false") }) as unknown as z.ZodType<ValueOf<S>>;
    case "number": {
      const error = say(`must be ${numberRequirement(s)}`);
      let n = z.number({ error });
      if (s.int) n = n.int({ error });
      n = s.minExclusive ? n.gt(s.min, { error }) : n.min(s.min, { error });
      if (s.max !== undefined) n = n.max(s.max, { error });
      return (s.nullable ? n.nullable() : n) as unknown as z.ZodType<ValueOf<S>>;
    }
    case "names": {
      const entries = subject ? `${subject} entries` : "entries";
      const item = z
        .string({ error: say(`must be a list of ${s.noun}`) })
        .min(1, { error: `${entries} must be non-empty ${s.noun}` })
        .max(s.maxLength, { error: `${entries} must be at most ${s.maxLength} characters` });
      let list = z.array(item, { error: say(`must be a list of ${s.noun}`) });
      if (s.maxItems !== undefined) list = list.max(s.maxItems, { error: say(`may list at most ${s.maxItems} ${s.noun}`) });
      return list as unknown as z.ZodType<ValueOf<S>>;
    }
    case "severities": {
      const error = say(`must be a list of severities (${SEVERITIES.join(", ")})`);
      return z.array(z.enum(SEVERITIES, { error }), { error }) as unknown as z.ZodType<ValueOf<S>>;
    }
  }
}
