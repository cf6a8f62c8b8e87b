import type { IncomingMessage } from 'node:http';
import type { AuthMethod, LoginFlowView, MethodPage, PageInput, WebApi } from '@gatehouse-auth/core';

/** The messages of a page's locale. */
export type Messages = ReturnType<WebApi['messages']>;

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
  /** A link another plugin shows with the method ("Forgot password?"), if any. */
  link?: LoginPageLink | null;
}

/**
 * What a plugin that provides the `passwordRecovery` service offers this page (docs/plugins.md,
 * "Services plugins provide"): a link shown with one method of the stage, or null.
 */
export interface LoginPageLink {
  /** The method it is shown with. */
  method: string;
  href: string;
  /** In the page's language. */
  text: string;
}

/** The part of the `passwordRecovery` service this page uses. */
export interface RecoveryLinks {
  loginLink(req: IncomingMessage, flow: LoginFlowView): LoginPageLink | null;
}

/** `pass_code` → `Pass code`: the label of an input a method did not describe. */
function humanize(field: string): string {
  const words = field.replace(/[_-]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * How the page presents a method, in the page's language: what it declares, or a plain form
 * from its verify fields. Every text has a message key built from the method's id
 * (`method.<ID>.label`, `method.<ID>.input.<field>.label`, …) that a catalog may translate; the
 * method's own (English) text is the fallback.
 */
export function methodView(method: AuthMethod, moduleUrl: string | null, t: Messages): MethodView {
  const page = method.page;
  const key = (name: string) => `method.${method.id}.${name}`;
  const inputs: PageInput[] = page?.inputs ?? method.verifyFields.map((field) => ({ field, label: humanize(field) }));
  const sends = page?.sends;
  const button = sends ? t.or(key('send'), sends.button) : null;
  return {
    id: method.id,
    label: t.or(key('label'), page?.label ?? method.id),
    help: t.optional(key('help'), page?.help),
    inputs: inputs.map((input) => {
      const help = t.optional(key(`input.${input.field}.help`), input.help);
      return {
        field: input.field,
        label: t.or(key(`input.${input.field}.label`), input.label),
        type: input.type ?? 'text',
        autocomplete: input.autocomplete ?? 'off',
        ...(input.inputmode ? { inputmode: input.inputmode } : {}),
        ...(help ? { help } : {}),
      };
    }),
    sends: sends && button ? { button, again: t.or(key('again'), sends.again ?? button) } : null,
    module: moduleUrl,
    discoverable: Boolean(method.discoverable),
  };
}

/** A method's offer after a login (`page.offer`), in the page's language. */
export function offerView(methodId: string, offer: NonNullable<MethodPage['offer']>, t: Messages): typeof offer {
  const key = (name: string) => `method.${methodId}.offer.${name}`;
  return {
    title: t.or(key('title'), offer.title),
    text: t.or(key('text'), offer.text),
    accept: t.or(key('accept'), offer.accept),
  };
}
