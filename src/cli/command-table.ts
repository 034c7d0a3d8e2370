// How a command is declared: its options (one table, from which the parser, the help text and the
// handler's argument type all come) and the module that runs it, loaded only when it is called.

export type OptionSpec =
  | { type: "boolean"; describe: string }
  | {
      type: "string";
      describe: string;
      default?: string;
      choices?: readonly string[];
      value?: string;
      multiple?: false;
      /** What is wrong with a value (a clause), or undefined when it is fine: checked by the parser for every command. */
      check?: (value: string) => string | undefined;
    }
  /** Given any number of times; the handler gets every value, in order. */
  | { type: "string"; describe: string; value?: string; multiple: true; check?: (value: string) => string | undefined }
  | { type: "integer"; describe: string; default?: number; min?: number; value?: string };

/** An option's value when it is not given: false for a flag, else its default (if any). */
export function defaultOf(option: OptionSpec): string | number | boolean | undefined {
  return option.type === "boolean" ? false : "default" in option ? option.default : undefined;
}

/** `max-attempts` → `maxAttempts`. */
type Camel<S extends string> = S extends `${infer Head}-${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S;
type ValueOf<O> = O extends { type: "boolean" }
  ? boolean
  : O extends { type: "integer" }
    ? number
    : O extends { multiple: true }
      ? string[]
      : O extends { choices: readonly (infer C)[] }
        ? C
        : string;
/** Whether an option always has a value: a boolean (false when absent) or one with a default. */
type Always<O> = O extends { type: "boolean" } ? true : O extends { default: string | number } ? true : false;

/** The arguments a handler receives for a table of options. */
export type ArgsOf<Options> = {
  [K in keyof Options as Always<Options[K]> extends true ? Camel<K & string> : never]: ValueOf<Options[K]>;
} & {
  [K in keyof Options as Always<Options[K]> extends true ? never : Camel<K & string>]?: ValueOf<Options[K]>;
};

/** Options every command takes. */
export interface GlobalArgs {
  /** The folder to work in (-C). */
  C: string;
  debug: boolean;
}

export interface Positional {
  name: string;
  describe: string;
  required: boolean;
  /** What is wrong with a value (a clause), or undefined when it is fine: checked by the parser. */
  check?: (value: string) => string | undefined;
}

/** The handler's argument for a positional: a required one is always there (the parser refuses its absence). */
type PositionalArgs<P> = P extends { name: infer N extends string; required: true }
  ? { [K in Camel<N>]: string }
  : P extends { name: infer N extends string }
    ? { [K in Camel<N>]?: string }
    : unknown;

export interface CommandSpec<
  Options extends Record<string, OptionSpec> = Record<string, OptionSpec>,
  Args = ArgsOf<Options>,
  P extends Positional | undefined = Positional | undefined,
> {
  name: string;
  describe: string;
  options: Options;
  /** At most one positional argument (its value is `args[name]`). */
  positional?: P;
  load: () => Promise<{ run: (args: Args & GlobalArgs) => Promise<number> }>;
}

/** What the parser hands to any command: its options by camel-cased name, and the global ones. */
export type ParsedArgs = Record<string, unknown> & GlobalArgs;

/** A declared command, its argument type erased once `command()` has checked it. */
export interface AnyCommand extends Omit<CommandSpec, "load"> {
  load: () => Promise<{ run: (args: ParsedArgs) => Promise<number> }>;
}

/**
 * Declares a command. The type checker ties the option table to the handler: the module's `run`
 * must accept what the parser produces from these options (src/cli/parse.ts builds exactly that).
 */
export function command<const Options extends Record<string, OptionSpec>, const P extends Positional | undefined = undefined, Extra = unknown>(
  spec: CommandSpec<Options, ArgsOf<Options> & PositionalArgs<P> & NoInfer<Extra>, P>,
): AnyCommand {
  return spec as unknown as AnyCommand;
}

/** `max-attempts` → `maxAttempts` (the property name a handler reads). */
export function camelCase(name: string): string {
  return name.replace(/-([a-z])/g, (_match, letter: string) => letter.toUpperCase());
}
