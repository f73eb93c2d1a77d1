// Lent to the other rooms of mrtr, not public API (mrtr/client is index.ts): the form reading the CLI's terminal uses.
export { checkContent, checkValue, type FormField, parseTyped, readForm } from './form.js';
