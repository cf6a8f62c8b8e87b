import type { AuthMethod, PageInput } from '../plugins/extensions.js';

/** An input with its defaults filled in. */
export type InputView = Required<Pick<PageInput, 'field' | 'label' | 'type' | 'autocomplete'>> &
  Pick<PageInput, 'inputmode' | 'help'>;

/** A method as the hosted page shows it. */
export interface MethodView {
  id: string;
  label: string;
  help: string | null;
  inputs: InputView[];
  sends: { button: string; again: string } | null;
  /** The URL of its browser module, if it has one. */
  module: string | null;
  /** It names the user by itself (a passkey): no identifier is needed before it. */
  discoverable: boolean;
}

/** `pass_code` → `Pass code`: the label of an input a method did not describe. */
function humanize(field: string): string {
  const words = field.replace(/[_-]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** How the page presents a method: what it declares, or a plain form from its verify fields. */
export function methodView(method: AuthMethod, moduleUrl: string | null): MethodView {
  const page = method.page;
  const inputs: PageInput[] = page?.inputs ?? method.verifyFields.map((field) => ({ field, label: humanize(field) }));
  return {
    id: method.id,
    label: page?.label ?? method.id,
    help: page?.help ?? null,
    inputs: inputs.map((input) => ({
      field: input.field,
      label: input.label,
      type: input.type ?? 'text',
      autocomplete: input.autocomplete ?? 'off',
      ...(input.inputmode ? { inputmode: input.inputmode } : {}),
      ...(input.help ? { help: input.help } : {}),
    })),
    sends: page?.sends ? { button: page.sends.button, again: page.sends.again ?? page.sends.button } : null,
    module: moduleUrl,
    discoverable: Boolean(method.discoverable),
  };
}
