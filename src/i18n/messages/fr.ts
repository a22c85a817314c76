import type { en } from './en.ts';

// French typography: a no-break space (\u00a0) goes before : ? ! and inside « ».
export const fr: Record<keyof typeof en, string> = {
  'layout.skip': 'Aller au contenu principal',
  'layout.footer': 'Connexion fournie par {serviceName}',

  'login.title': 'Connexion',
  'login.subtitle': 'pour continuer vers {clientName}',
  'login.intro': 'Saisissez votre adresse e-mail\u00a0: nous vous enverrons un code à 6\u00a0chiffres pour vous connecter.',
  'login.email.label': 'Adresse e-mail',
  'login.submit': 'M’envoyer un code',
  'login.error.invalid_email': 'Saisissez une adresse e-mail valide.',
  'login.error.rate_limited': 'Trop de demandes. Réessayez dans quelques minutes.',

  'code.title': 'Consultez vos e-mails',
  'code.intro': 'Nous avons envoyé un code à 6\u00a0chiffres à {email}. Il expire dans {minutes}\u00a0minutes.',
  'code.label': 'Code à 6\u00a0chiffres',
  'code.hint': 'Vous ne le trouvez pas\u00a0? Vérifiez votre dossier de courrier indésirable.',
  'code.submit': 'Se connecter',
  'code.change_email': 'Utiliser une autre adresse e-mail',
  'code.error.invalid': 'Ce code n’est pas correct. Vérifiez-le et réessayez.',
  'code.error.expired': 'Ce code a expiré ou a été saisi trop de fois. Demandez-en un nouveau.',

  'consent.title': '{clientName} souhaite accéder à votre compte',
  'consent.signed_in_as': 'Connecté en tant que {email}',
  'consent.asks': 'Ce que demande {clientName}',
  'consent.scope.openid': 'Confirmer votre identité',
  'consent.scope.profile': 'Votre nom et votre profil',
  'consent.scope.email': 'Votre adresse e-mail',
  'consent.scope.offline_access': 'Conserver l’accès quand vous n’êtes pas connecté (jusqu’à ce que vous le révoquiez dans votre console)',
  'consent.claims': 'Informations qui seront partagées',
  'consent.client_site': 'Site web\u00a0: {host}',
  'consent.trust': 'N’autorisez l’accès que si vous faites confiance à {clientName}.',
  'consent.allow': 'Autoriser',
  'consent.deny': 'Refuser',

  'error.title': 'Un problème est survenu',
  'error.session_expired': 'Votre connexion a pris trop de temps. Revenez sur le site et recommencez.',
  'error.not_found': 'Page introuvable',
  'error.status': 'Erreur {status}',

  'letter.subject': '{code} est votre code de connexion pour {serviceName}',
  'letter.title': 'Votre code de connexion',
  'letter.intro': 'Saisissez ce code pour vous connecter à {serviceName}\u00a0:',
  'letter.expires': 'Ce code expire dans {minutes}\u00a0minutes.',
  'letter.ignore': 'Si vous n’avez pas demandé ce code, vous pouvez ignorer cet e-mail. Quelqu’un a peut-être saisi votre adresse par erreur.',
  'letter.never_share': 'Ne communiquez jamais ce code à personne. {serviceName} ne vous le demandera jamais.',
};
