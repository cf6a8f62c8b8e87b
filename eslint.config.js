import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node, ...globals.mocha } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['warn', 'error'] }],
    },
  },
  {
    // Page modules of methods run in the browser.
    files: ['**/page.js', '**/client/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['**/test/**', 'test/**', 'bench/**', '.ci/**'],
    rules: { 'no-console': 'off', '@typescript-eslint/no-unused-expressions': 'off' },
  },
);
